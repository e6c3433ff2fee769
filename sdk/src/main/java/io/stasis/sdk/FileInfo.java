package io.stasis.sdk;

import java.time.Instant;

/**
 * A file entry inside a sandbox, as {@code stat}, {@code list}, {@code write}, {@code mkdir} and
 * {@code move} return it.
 *
 * @param path          the absolute path as the sandbox sees it
 * @param name          the last path element
 * @param type          file, dir, symlink or other
 * @param size          size in bytes
 * @param mode          permission bits in octal, e.g. {@code "0644"}
 * @param modifiedAt    last modification
 * @param symlinkTarget the link's target when {@code type} is symlink, else null
 */
public record FileInfo(String path, String name, FileType type, long size, String mode, Instant modifiedAt,
                       String symlinkTarget) {
    public FileInfo {
        if (type == null) type = FileType.OTHER;
    }

    public boolean isDirectory() {
        return type == FileType.DIR;
    }

    public boolean isFile() {
        return type == FileType.FILE;
    }

    public boolean isSymlink() {
        return type == FileType.SYMLINK;
    }
}

package io.stasis.core.files;

import java.time.Instant;
import java.util.Optional;

/**
 * One file as the sandbox sees it.
 *
 * @param path          absolute path inside the sandbox
 * @param name          last component ({@code /} for the root)
 * @param type          what it is; a symlink is reported as itself, not its target
 * @param size          bytes (for a symlink, the length of its target)
 * @param mode          permission bits, e.g. {@code 0644}
 * @param mtime         last modification
 * @param symlinkTarget what a symlink points to, as written
 */
public record FileInfo(String path, String name, FileType type, long size, int mode, Instant mtime, Optional<String> symlinkTarget) {
}

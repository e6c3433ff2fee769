package io.stasis.core.spi;

import io.stasis.core.files.FileContent;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.SandboxPath;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;

/**
 * File access to a sandbox's root filesystem from the host, resolved as the sandbox would resolve
 * it: {@code ..}, absolute and relative symlinks can never lead outside {@code root}, in either
 * direction, whatever the sandbox changes meanwhile.
 *
 * <p>Errors: {@code file_not_found}, {@code not_a_directory}, {@code is_a_directory},
 * {@code file_exists}, {@code directory_not_empty}, {@code invalid_request}.
 */
public interface SandboxFiles {

    /** Opens a regular file for reading (symlinks followed inside the root). */
    FileContent read(Path root, SandboxPath path);

    /**
     * Writes a regular file, creating missing parent directories. The new content appears at once
     * when complete; a failed or cut-off upload leaves the old file as it was.
     *
     * @param mode     permission bits for a new file (default 0644); for an existing file, its mode is kept unless given
     * @param maxBytes more than this fails with {@code payload_too_large}
     */
    FileInfo write(Path root, SandboxPath path, InputStream content, OptionalInt mode, long maxBytes);

    /** Lists a directory (symlinks to directories followed inside the root). */
    List<FileInfo> list(Path root, SandboxPath path);

    /** Describes the file itself (a symlink is not followed). */
    FileInfo stat(Path root, SandboxPath path);

    /** Creates a directory and any missing parents. An existing directory is fine. */
    FileInfo mkdir(Path root, SandboxPath path, OptionalInt mode);

    /** Renames {@code from} to {@code to}, replacing a file at {@code to} only if {@code overwrite}. */
    FileInfo move(Path root, SandboxPath from, SandboxPath to, boolean overwrite);

    /** Removes a file, a symlink (not its target) or, with {@code recursive}, a directory tree. */
    void delete(Path root, SandboxPath path, boolean recursive);

    /** Root ownership: the host uid and gid new files get, so the sandbox sees them as its root's. */
    FileOwner owner();
}

package io.stasis.core.files;

import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.spi.SandboxFiles;
import java.io.InputStream;
import java.util.List;
import java.util.OptionalInt;

/** The files API: each call finds the sandbox's root and hands the confined access to {@link SandboxFiles}. */
public final class FileService {
    private final SandboxService sandboxes;
    private final SandboxFiles files;

    public FileService(SandboxService sandboxes, SandboxFiles files) {
        this.sandboxes = sandboxes;
        this.files = files;
    }

    private java.nio.file.Path root(String sandboxRef) {
        return sandboxes.rootOf(sandboxes.get(sandboxRef));
    }

    public FileContent read(String sandboxRef, SandboxPath path) {
        return files.read(root(sandboxRef), path);
    }

    public FileInfo write(String sandboxRef, SandboxPath path, InputStream content, OptionalInt mode, long maxBytes) {
        return files.write(root(sandboxRef), path, content, mode, maxBytes);
    }

    public List<FileInfo> list(String sandboxRef, SandboxPath path) {
        return files.list(root(sandboxRef), path);
    }

    public FileInfo stat(String sandboxRef, SandboxPath path) {
        return files.stat(root(sandboxRef), path);
    }

    public FileInfo mkdir(String sandboxRef, SandboxPath path, OptionalInt mode) {
        return files.mkdir(root(sandboxRef), path, mode);
    }

    public FileInfo move(String sandboxRef, SandboxPath from, SandboxPath to, boolean overwrite) {
        return files.move(root(sandboxRef), from, to, overwrite);
    }

    public void delete(String sandboxRef, SandboxPath path, boolean recursive) {
        files.delete(root(sandboxRef), path, recursive);
    }
}

package io.stasis.core.files;

import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.FileWatcher;
import io.stasis.core.spi.SandboxFiles;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.Consumer;

/**
 * The files API: each call finds the sandbox's root and hands the confined access to
 * {@link SandboxFiles}. A paused or hibernated sandbox is resumed first (auto-resume); a stopped
 * one keeps its root, which stays readable and writable.
 */
public final class FileService {
    private final SandboxService sandboxes;
    private final LifecycleService lifecycle;
    private final ActivityTracker activity;
    private final SandboxFiles files;
    private final FileWatcher watcher;

    public FileService(SandboxService sandboxes, LifecycleService lifecycle, ActivityTracker activity, SandboxFiles files,
                       FileWatcher watcher) {
        this.sandboxes = sandboxes;
        this.lifecycle = lifecycle;
        this.activity = activity;
        this.files = files;
        this.watcher = watcher;
    }

    private Path root(String sandboxRef) {
        var sandbox = sandboxes.get(sandboxRef);
        activity.touch(sandbox.id());
        if (sandbox.state().asleep()) {
            if (!sandbox.lifecycle().autoResume())
                throw StasisException.invalidState(sandbox.id().value(), sandbox.state().wireName(), "use files (autoResume is off: resume it first)");
            sandbox = lifecycle.resume(sandbox.id(), LifecycleService.Reason.API);
        }
        return sandboxes.rootOf(sandbox);
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

    /**
     * Watches a path of a sandbox (see {@link FileWatcher#watch}). The watch does not keep the
     * sandbox awake: a paused or hibernated sandbox changes no files, and the watch goes on after
     * it resumes.
     */
    public FileWatcher.Watch watch(String sandboxRef, SandboxPath path, boolean recursive, Consumer<List<FileEvent>> listener) {
        return watcher.watch(root(sandboxRef), path, recursive, listener);
    }
}

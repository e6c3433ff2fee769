package io.stasis.core.spi;

import io.stasis.core.files.FileEvent;
import io.stasis.core.files.SandboxPath;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Watches files of a sandbox's root from the host. Paths resolve confined to the root, as in
 * {@link SandboxFiles}; events name paths as the sandbox sees them, never a host path.
 */
public interface FileWatcher {

    /**
     * Starts watching {@code path} (a directory, or a single file) and, with {@code recursive},
     * everything below it, including directories created later.
     * <p>Effects on success: {@code listener} receives batches of events, in order, from one
     * thread (and one empty batch after the last when the watch ends on its own), bursts coalesced (several modifications of one file in a short while are one
     * event). The watch lasts until closed, also across a hibernation of the sandbox (the files
     * stay where they are).
     * <p>Errors: {@code file_not_found}, {@code invalid_request}.
     */
    Watch watch(Path root, SandboxPath path, boolean recursive, Consumer<List<FileEvent>> listener);

    /** A running watch; closing it stops the events and frees its kernel resources. */
    interface Watch extends AutoCloseable {
        @Override
        void close();

        /** Whether the watch ended on its own (its root is gone, or the kernel dropped events: {@code overflowed}). */
        boolean ended();

        /** Why it ended on its own, named for the API ({@code overflowed}, {@code deleted}...); empty while it runs. */
        Optional<String> whyEnded();
    }
}

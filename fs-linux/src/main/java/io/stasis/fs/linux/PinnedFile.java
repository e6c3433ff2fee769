package io.stasis.fs.linux;

import java.nio.file.Path;

/**
 * A file inside a sandbox root held by an {@code O_PATH} fd: whatever the sandbox renames or
 * swaps afterwards, {@link #procPath()} leads to this inode. Connect a
 * {@code UnixDomainSocketAddress} to {@link #procPath()} to reach a pinned socket.
 */
public final class PinnedFile implements AutoCloseable {
    private final Fd fd;
    private final Stat stat;

    PinnedFile(Fd fd, Stat stat) {
        this.fd = fd;
        this.stat = stat;
    }

    /** {@code /proc/self/fd/N}: valid in this process while the file is open. */
    public Path procPath() {
        return Path.of(fd.procPath());
    }

    /** The inode as it was when pinned. */
    public Stat stat() {
        return stat;
    }

    @Override
    public void close() {
        fd.close();
    }
}

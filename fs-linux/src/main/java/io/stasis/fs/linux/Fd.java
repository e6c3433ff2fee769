package io.stasis.fs.linux;

import java.util.concurrent.atomic.AtomicBoolean;

/** An owned file descriptor, closed once. */
final class Fd implements AutoCloseable {
    private final int value;
    private final AtomicBoolean closed = new AtomicBoolean();

    Fd(int value) {
        this.value = value;
    }

    int value() {
        if (closed.get()) throw new IllegalStateException("fd " + value + " is closed");
        return value;
    }

    /** The magic link that reopens this very inode. */
    String procPath() {
        return "/proc/self/fd/" + value();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) Syscalls.close(value);
    }
}

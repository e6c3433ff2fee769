package io.stasis.network.linux.proxy;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;

/**
 * One socket fd owned through {@link ProxySyscalls}: a listener or an accepted client connection.
 * An accepted connection is non-blocking: a read or write that would block parks its thread until
 * the {@link ReadinessPoller} says the socket is ready, so connections run on virtual threads.
 * Reads and writes may run on two threads at once (one per direction); {@link #shutdown} may be
 * called from any thread to wake them; {@link #close} must come last, once no thread uses the fd,
 * because a closed fd number is reused at once by the next {@code accept} and a late read would
 * then hit another sandbox's connection. Closing and shutting down are serialized for that reason.
 */
final class NativeSocket implements AutoCloseable {
    private final int fd;
    private boolean closed; // guarded by this
    /** When data last went through it either way ({@link System#nanoTime()}): what the idle limit reads. */
    private volatile long lastData = System.nanoTime();

    private NativeSocket(int fd) {
        this.fd = fd;
    }

    /** How long no data went through it, either way. */
    long idleNanos(long now) {
        return now - lastData;
    }

    static NativeSocket listen(InetSocketAddress address, int backlog) throws NativeSocketException {
        return new NativeSocket(ProxySyscalls.listen(address, backlog));
    }

    /** The next connection, or null if none arrived within {@code timeoutMillis}. */
    NativeSocket accept(int timeoutMillis) throws NativeSocketException {
        if (!ProxySyscalls.pollReadable(fd, timeoutMillis)) return null;
        return new NativeSocket(ProxySyscalls.accept(fd));
    }

    InetSocketAddress localAddress() throws NativeSocketException {
        return ProxySyscalls.local(fd);
    }

    InetSocketAddress peer() throws NativeSocketException {
        return ProxySyscalls.peer(fd);
    }

    InetSocketAddress originalDestination() throws NativeSocketException {
        return ProxySyscalls.originalDestination(fd);
    }

    void noDelay() throws NativeSocketException {
        ProxySyscalls.setIntOption(fd, ProxySyscalls.IPPROTO_TCP, ProxySyscalls.TCP_NODELAY, 1);
    }

    /** Waits until data, end of stream (0) or an error. */
    int read(MemorySegment buffer) throws NativeSocketException {
        try {
            return read(buffer, 0);
        } catch (SocketTimeoutException e) {
            throw new IllegalStateException("no deadline, no timeout", e);
        }
    }

    /** Like {@link #read(MemorySegment)}, but gives up at {@code deadlineNanos} ({@link System#nanoTime()}; 0: never). */
    int read(MemorySegment buffer, long deadlineNanos) throws NativeSocketException, SocketTimeoutException {
        while (true) {
            int n = ProxySyscalls.readOrWouldBlock(fd, buffer);
            if (n != ProxySyscalls.WOULD_BLOCK) {
                lastData = System.nanoTime();
                return n;
            }
            ReadinessPoller.READS.await(fd, deadlineNanos);
        }
    }

    /** Writes all of {@code data}, waiting for room as the peer reads. */
    void write(MemorySegment data) throws NativeSocketException {
        long done = 0;
        while (done < data.byteSize()) {
            int n = ProxySyscalls.sendOrWouldBlock(fd, data.asSlice(done));
            if (n == ProxySyscalls.WOULD_BLOCK) {
                try {
                    ReadinessPoller.WRITES.await(fd, 0);
                } catch (SocketTimeoutException e) {
                    throw new IllegalStateException("no deadline, no timeout", e);
                }
            } else {
                done += n;
            }
        }
        lastData = System.nanoTime();
    }

    /** Sends FIN after what was written: the client sees end of stream, and may still send. */
    void shutdownOutput() throws NativeSocketException {
        shutdown(ProxySyscalls.SHUT_WR);
    }

    /** Wakes any thread blocked reading this socket; harmless if already shut down or closed. */
    void abort() {
        try {
            shutdown(ProxySyscalls.SHUT_RDWR);
        } catch (NativeSocketException e) {
            // ENOTCONN after the peer reset: nothing left to wake.
        }
    }

    private synchronized void shutdown(int how) throws NativeSocketException {
        if (!closed) ProxySyscalls.shutdown(fd, how);
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        ReadinessPoller.READS.forget(fd); // before the number can be reused
        ReadinessPoller.WRITES.forget(fd);
        ProxySyscalls.close(fd);
    }

    @Override
    public String toString() {
        return "fd " + fd;
    }
}

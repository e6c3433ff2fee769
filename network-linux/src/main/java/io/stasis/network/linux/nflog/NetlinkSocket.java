package io.stasis.network.linux.nflog;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.stasis.host.Libc;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A netlink socket to the kernel, through FFM and glibc; the only class of this package that
 * touches {@code java.lang.foreign}. Calls block the calling thread (use a platform thread: a
 * virtual one would pin its carrier), retry {@code EINTR} and throw {@link NetlinkException} with
 * the errno. One thread at a time; {@link #close} once nothing uses it any more.
 */
final class NetlinkSocket implements AutoCloseable {
    static final int NETLINK_NETFILTER = 12;

    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int SOCK_CLOEXEC = 02000000;
    /** {@code struct sockaddr_nl { u16 family; u16 pad; u32 pid; u32 groups; }}: pid 0 lets the kernel pick. */
    private static final int SOCKADDR_NL_SIZE = 12;
    private static final short POLLIN = 0x1;

    private static final MethodHandle SOCKET = Libc.function("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle BIND = Libc.function("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SEND = Libc.function("send", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle RECV = Libc.function("recv", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle POLL = Libc.function("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment state = arena.allocate(Libc.CALL_STATE);
    private final MemorySegment buffer;

    private NetlinkSocket(int fd, int bufferSize) {
        this.fd = fd;
        this.buffer = arena.allocate(bufferSize);
    }

    /** A socket of netlink {@code protocol}, bound to an address the kernel picks; receives up to {@code bufferSize} bytes at once. */
    static NetlinkSocket open(int protocol, int bufferSize) throws NetlinkException {
        int fd;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = a.allocate(Libc.CALL_STATE);
            fd = (int) check("socket(AF_NETLINK)", st, () -> (int) SOCKET.invokeExact(st, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol));
        }
        var socket = new NetlinkSocket(fd, bufferSize);
        try {
            MemorySegment address = socket.arena.allocate(SOCKADDR_NL_SIZE);
            address.set(JAVA_SHORT, 0, (short) AF_NETLINK);
            check("bind(AF_NETLINK)", socket.state, () -> (int) BIND.invokeExact(socket.state, fd, address, SOCKADDR_NL_SIZE));
            return socket;
        } catch (NetlinkException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** Sends one message to the kernel. */
    void send(byte[] message) throws NetlinkException {
        MemorySegment.copy(message, 0, buffer, JAVA_BYTE, 0, message.length);
        long sent = check("send", state, () -> (long) SEND.invokeExact(state, fd, buffer, (long) message.length, 0));
        if (sent != message.length) throw new NetlinkException("send (" + sent + " of " + message.length + " bytes)", 0);
    }

    /**
     * Waits up to {@code timeoutMillis} for what the kernel sent and copies it into {@code into};
     * returns how many bytes, 0 when nothing came in time.
     */
    int receive(byte[] into, int timeoutMillis) throws NetlinkException {
        MemorySegment pollFd = buffer.asSlice(0, 8); // struct pollfd { int fd; short events; short revents; }
        pollFd.set(JAVA_INT, 0, fd);
        pollFd.set(JAVA_SHORT, 4, POLLIN);
        pollFd.set(JAVA_SHORT, 6, (short) 0);
        long ready = check("poll", state, () -> (int) POLL.invokeExact(state, pollFd, 1L, timeoutMillis));
        if (ready == 0) return 0;
        long n = check("recv", state, () -> (long) RECV.invokeExact(state, fd, buffer, Math.min(buffer.byteSize(), into.length), 0));
        MemorySegment.copy(buffer, JAVA_BYTE, 0, into, 0, (int) n);
        return (int) n;
    }

    @Override
    public void close() {
        try {
            // Once: Linux releases the descriptor even when close reports an error; nothing is left to undo.
            Libc.once("close", () -> (int) CLOSE.invokeExact(state, fd));
        } finally {
            arena.close();
        }
    }

    /** Runs a call until it does not fail with {@code EINTR}; a negative result is thrown with its errno. */
    private static long check(String what, MemorySegment state, Libc.Call call) throws NetlinkException {
        long result = Libc.restarting(what, state, call);
        if (result < 0) throw new NetlinkException(what, (int) -result);
        return result;
    }
}

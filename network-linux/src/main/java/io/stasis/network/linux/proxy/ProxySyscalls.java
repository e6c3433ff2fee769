package io.stasis.network.linux.proxy;

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
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/**
 * The socket system calls of the proxy, through FFM and glibc; the only class of this package that
 * touches {@code java.lang.foreign}. It exists because the one thing the proxy cannot do without,
 * {@code getsockopt(SO_ORIGINAL_DST)}, needs the client socket's fd, which {@code java.net} hides.
 * IPv4 only: {@code SO_ORIGINAL_DST} answers a {@code sockaddr_in}. Every call retries {@code EINTR}
 * and throws {@link NativeSocketException} with the errno. A connection's reads and sends never
 * block (its socket is non-blocking: they answer {@link #WOULD_BLOCK}, and {@link ReadinessPoller}
 * waits), so virtual threads make them; the listener's poll and the poller's {@code epoll_wait}
 * block, on platform threads of their own.
 */
final class ProxySyscalls {
    static final int SOL_SOCKET = 1;
    static final int SO_REUSEADDR = 2;
    static final int IPPROTO_TCP = 6;
    static final int TCP_NODELAY = 1;
    static final int SHUT_WR = 1;
    static final int SHUT_RDWR = 2;

    private static final int AF_INET = 2;
    private static final int SOCK_STREAM = 1;
    private static final int SOCK_CLOEXEC = 02000000;
    private static final int SOL_IP = 0;
    private static final int SO_ORIGINAL_DST = 80; // <linux/netfilter_ipv4.h>
    /** Without it a write to a connection the peer reset raises SIGPIPE in the whole JVM. */
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final short POLLIN = 0x1;
    private static final int SOCKADDR_IN_SIZE = 16;


    private static final MethodHandle SOCKET = Libc.function("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle SETSOCKOPT = Libc.function("setsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle GETSOCKOPT = Libc.function("getsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle BIND = Libc.function("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle LISTEN = Libc.function("listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle ACCEPT4 = Libc.function("accept4",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle GETPEERNAME = Libc.function("getpeername", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle GETSOCKNAME = Libc.function("getsockname", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle READ = Libc.function("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle SEND = Libc.function("send",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SHUTDOWN = Libc.function("shutdown", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle POLL = Libc.function("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle EPOLL_CREATE1 = Libc.function("epoll_create1", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle EPOLL_CTL = Libc.function("epoll_ctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle EPOLL_WAIT = Libc.function("epoll_wait", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
    private static final int SOCK_NONBLOCK = 04000;
    private static final int EAGAIN = 11;
    private static final int EPOLL_CLOEXEC = 02000000;
    static final int EPOLL_CTL_ADD = 1;
    static final int EPOLL_CTL_DEL = 2;
    static final int EPOLL_CTL_MOD = 3;
    /** {@code struct epoll_event} on x86-64: packed, {@code uint32 events} then the 8-byte {@code data}, of which we use the first 4 (the fd). */
    static final int EPOLL_EVENT_SIZE = 12;
    /** What {@link #readOrWouldBlock} and {@link #sendOrWouldBlock} answer for {@code EAGAIN}. */
    static final int WOULD_BLOCK = -1;

    private ProxySyscalls() {
    }

    /** A blocking IPv4 TCP socket with {@code SO_REUSEADDR}, bound to {@code address} and listening. */
    static int listen(InetSocketAddress address, int backlog) throws NativeSocketException {
        int fd;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            fd = retry("socket", address, st, () -> (int) SOCKET.invokeExact(st, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        }
        try {
            setIntOption(fd, SOL_SOCKET, SO_REUSEADDR, 1);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment sa = sockaddr(arena, address);
                MemorySegment st = arena.allocate(Libc.CALL_STATE);
                retry("bind", address, st, () -> (int) BIND.invokeExact(st, fd, sa, SOCKADDR_IN_SIZE));
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment st = arena.allocate(Libc.CALL_STATE);
                retry("listen", address, st, () -> (int) LISTEN.invokeExact(st, fd, backlog));
            }
            return fd;
        } catch (NativeSocketException | RuntimeException e) {
            close(fd);
            throw e;
        }
    }

    /** {@code setsockopt(fd, level, name, &value, sizeof(int))}. */
    static void setIntOption(int fd, int level, int name, int value) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocateFrom(JAVA_INT, value);
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            retry("setsockopt", "fd " + fd, st, () -> (int) SETSOCKOPT.invokeExact(st, fd, level, name, v, (int) JAVA_INT.byteSize()));
        }
    }

    /**
     * Waits up to {@code timeoutMillis} (-1: forever) for {@code fd} to be readable, or to have an
     * error or hang-up the next read reports. False on timeout. An {@code EINTR} counts as a timeout
     * slice: callers loop on their own deadline anyway.
     */
    static boolean pollReadable(int fd, int timeoutMillis) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfd = arena.allocate(8);
            pfd.set(JAVA_INT, 0, fd);
            pfd.set(JAVA_SHORT, 4, POLLIN);
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            int n = (int) Libc.once("poll", () -> (int) POLL.invokeExact(st, pfd, 1L, timeoutMillis));
            if (n >= 0) return n > 0;
            int errno = Libc.errno(st);
            if (errno == Libc.EINTR) return false;
            throw new NativeSocketException("poll", errno, "fd " + fd);
        }
    }

    /** {@code accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)}: a non-blocking connected socket (see {@link ReadinessPoller}). */
    static int accept(int fd) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            return retry("accept4", "fd " + fd, st,
                    () -> (int) ACCEPT4.invokeExact(st, fd, MemorySegment.NULL, MemorySegment.NULL, SOCK_CLOEXEC | SOCK_NONBLOCK));
        }
    }

    /** Where the client meant to connect before nat REDIRECT rewrote it; {@code ENOENT} if nothing rewrote it. */
    static InetSocketAddress originalDestination(int fd) throws NativeSocketException {
        return address("getsockopt(SO_ORIGINAL_DST)", fd, (st, sa, len) -> (int) GETSOCKOPT.invokeExact(st, fd, SOL_IP, SO_ORIGINAL_DST, sa, len));
    }

    static InetSocketAddress peer(int fd) throws NativeSocketException {
        return address("getpeername", fd, (st, sa, len) -> (int) GETPEERNAME.invokeExact(st, fd, sa, len));
    }

    static InetSocketAddress local(int fd) throws NativeSocketException {
        return address("getsockname", fd, (st, sa, len) -> (int) GETSOCKNAME.invokeExact(st, fd, sa, len));
    }

    /** Reads at most {@code buffer.byteSize()} bytes of a non-blocking socket; 0 means end of stream, {@link #WOULD_BLOCK} nothing yet. */
    static int readOrWouldBlock(int fd, MemorySegment buffer) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            return orWouldBlock("read", fd, Libc.restarting("read", st, () -> (long) READ.invokeExact(st, fd, buffer, buffer.byteSize())));
        }
    }

    /** Sends what a non-blocking socket takes now of {@code data}: the count, or {@link #WOULD_BLOCK} if none. */
    static int sendOrWouldBlock(int fd, MemorySegment data) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            return orWouldBlock("send", fd, Libc.restarting("send", st, () -> (long) SEND.invokeExact(st, fd, data, data.byteSize(), MSG_NOSIGNAL)));
        }
    }

    private static int orWouldBlock(String what, int fd, long result) throws NativeSocketException {
        if (result == -EAGAIN) return WOULD_BLOCK;
        if (result < 0) throw new NativeSocketException(what, (int) -result, "fd " + fd);
        return (int) result;
    }

    /** {@code epoll_create1(EPOLL_CLOEXEC)}. */
    static int epollCreate() throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            return retry("epoll_create1", "a poller", st, () -> (int) EPOLL_CREATE1.invokeExact(st, EPOLL_CLOEXEC));
        }
    }

    /** {@code epoll_ctl(epfd, op, fd, {events, fd})}; the errno, or 0. */
    static int epollControl(int epfd, int op, int fd, int events) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(EPOLL_EVENT_SIZE);
            event.set(JAVA_INT, 0, events);
            event.set(JAVA_INT, 4, fd);
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            long r = Libc.restarting("epoll_ctl", st, () -> (int) EPOLL_CTL.invokeExact(st, epfd, op, fd, event));
            return r < 0 ? (int) -r : 0;
        }
    }

    /** {@code epoll_wait(epfd, events, capacity, -1)}: how many of {@code events} were filled (0 after an {@code EINTR}). */
    static int epollWait(int epfd, MemorySegment events) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            int n = (int) Libc.once("epoll_wait", () -> (int) EPOLL_WAIT.invokeExact(st, epfd, events, (int) (events.byteSize() / EPOLL_EVENT_SIZE), -1));
            if (n >= 0) return n;
            int errno = Libc.errno(st);
            if (errno == Libc.EINTR) return 0;
            throw new NativeSocketException("epoll_wait", errno, "fd " + epfd);
        }
    }

    static void shutdown(int fd, int how) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            retry("shutdown", "fd " + fd, st, () -> (int) SHUTDOWN.invokeExact(st, fd, how));
        }
    }

    /** Closes {@code fd} once; {@code EINTR} is not retried (Linux has released the fd already). */
    static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            Libc.once("close", () -> (int) CLOSE.invokeExact(st, fd));
        }
    }

    private static InetSocketAddress address(String what, int fd, AddressCall fill) throws NativeSocketException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sa = arena.allocate(SOCKADDR_IN_SIZE);
            MemorySegment len = arena.allocateFrom(JAVA_INT, SOCKADDR_IN_SIZE);
            MemorySegment st = arena.allocate(Libc.CALL_STATE);
            retry(what, "fd " + fd, st, () -> fill.call(st, sa, len));
            short family = sa.get(JAVA_SHORT, 0);
            if (family != AF_INET) throw new NativeSocketException(what + " (family " + family + ")", 97 /* EAFNOSUPPORT */, "fd " + fd);
            int port = Short.toUnsignedInt(sa.get(JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2));
            byte[] ip = sa.asSlice(4, 4).toArray(JAVA_BYTE);
            try {
                return new InetSocketAddress(InetAddress.getByAddress(ip), port);
            } catch (UnknownHostException e) {
                throw new IllegalStateException("4 bytes are always an IPv4 address", e);
            }
        }
    }

    private static MemorySegment sockaddr(Arena arena, InetSocketAddress address) {
        if (!(address.getAddress() instanceof Inet4Address v4))
            throw new IllegalArgumentException("the egress proxy listens on IPv4 only (SO_ORIGINAL_DST is IPv4): " + address);
        MemorySegment sa = arena.allocate(SOCKADDR_IN_SIZE);
        sa.set(JAVA_SHORT, 0, (short) AF_INET);
        sa.set(JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) address.getPort());
        MemorySegment.copy(MemorySegment.ofArray(v4.getAddress()), 0, sa, 4, 4);
        return sa;
    }

    private static int retry(String what, Object target, MemorySegment st, Libc.Call c) throws NativeSocketException {
        long r = Libc.restarting(what, st, c);
        if (r < 0) throw new NativeSocketException(what, (int) -r, String.valueOf(target));
        return (int) r;
    }

    @FunctionalInterface
    private interface AddressCall {
        int call(MemorySegment state, MemorySegment sockaddr, MemorySegment length) throws Throwable;
    }
}

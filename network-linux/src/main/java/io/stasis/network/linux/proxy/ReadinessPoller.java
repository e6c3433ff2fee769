package io.stasis.network.linux.proxy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.SocketTimeoutException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits for the proxy's non-blocking client sockets without holding a thread each: a thread that
 * would block parks (a virtual thread gives its carrier back), and one platform thread per
 * direction, in {@code epoll_wait}, unparks it when its socket is ready. Two instances, one for
 * reads and one for writes, since an epoll set holds an fd once and each direction of a connection
 * has a thread of its own waiting.
 *
 * <p>Each wait arms its fd for one event ({@code EPOLLONESHOT}), registering it first; an fd is
 * {@link #forget forgotten} before it is closed, since its number is reused at once. A wake-up may
 * be spurious: callers try the call again and wait again. A shutdown of the socket (what closing a
 * connection and the idle timeout do) makes it ready, so a parked thread always wakes.
 */
final class ReadinessPoller {
    private static final Logger log = LoggerFactory.getLogger(ReadinessPoller.class);
    private static final int EPOLLIN = 0x001;
    private static final int EPOLLOUT = 0x004;
    private static final int EPOLLRDHUP = 0x2000;
    private static final int EPOLLONESHOT = 1 << 30;
    private static final int BATCH = 64;

    /** For reads: data, end of stream, an error or a hang-up. */
    static final ReadinessPoller READS = start("egress-read-poller", EPOLLIN | EPOLLRDHUP);
    /** For writes: room in the send buffer, an error or a hang-up. */
    static final ReadinessPoller WRITES = start("egress-write-poller", EPOLLOUT);

    private final int epfd;
    private final int events;
    private final Map<Integer, Thread> waiters = new ConcurrentHashMap<>();
    private final Set<Integer> registered = ConcurrentHashMap.newKeySet();

    private ReadinessPoller(int epfd, int events) {
        this.epfd = epfd;
        this.events = events;
    }

    private static ReadinessPoller start(String name, int events) {
        try {
            var poller = new ReadinessPoller(ProxySyscalls.epollCreate(), events);
            Thread.ofPlatform().daemon().name(name).start(poller::dispatch);
            return poller;
        } catch (NativeSocketException e) {
            throw new IllegalStateException("cannot make the egress proxy's " + name, e);
        }
    }

    /**
     * Parks the calling thread until {@code fd} may be ready, or until {@code deadlineNanos}
     * ({@link System#nanoTime()}; 0: no deadline), past which it throws.
     */
    void await(int fd, long deadlineNanos) throws NativeSocketException, SocketTimeoutException {
        var self = Thread.currentThread();
        waiters.put(fd, self);
        try {
            arm(fd);
            if (deadlineNanos == 0) {
                LockSupport.park(this);
            } else {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) throw new SocketTimeoutException("no data before the deadline");
                LockSupport.parkNanos(this, left);
            }
        } finally {
            waiters.remove(fd, self);
        }
    }

    /** Takes {@code fd} out of the set: before it is closed. */
    void forget(int fd) {
        if (registered.remove(fd)) ProxySyscalls.epollControl(epfd, ProxySyscalls.EPOLL_CTL_DEL, fd, 0);
    }

    private void arm(int fd) throws NativeSocketException {
        int mask = events | EPOLLONESHOT;
        int errno = registered.add(fd) ? ProxySyscalls.epollControl(epfd, ProxySyscalls.EPOLL_CTL_ADD, fd, mask)
                : ProxySyscalls.epollControl(epfd, ProxySyscalls.EPOLL_CTL_MOD, fd, mask);
        if (errno != 0) throw new NativeSocketException("epoll_ctl", errno, "fd " + fd);
    }

    /** The poller's thread: wakes the waiter of every fd that became ready. */
    private void dispatch() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ready = arena.allocate((long) BATCH * ProxySyscalls.EPOLL_EVENT_SIZE);
            while (true) {
                int n = ProxySyscalls.epollWait(epfd, ready);
                for (int i = 0; i < n; i++) {
                    int fd = ready.get(ValueLayout.JAVA_INT, (long) i * ProxySyscalls.EPOLL_EVENT_SIZE + 4);
                    var waiter = waiters.get(fd);
                    if (waiter != null) LockSupport.unpark(waiter);
                }
            }
        } catch (NativeSocketException | RuntimeException e) {
            log.atError().setCause(e).log("the egress proxy's poller stopped: connections waiting on it hang");
        }
    }
}

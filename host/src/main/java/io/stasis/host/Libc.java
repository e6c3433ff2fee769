package io.stasis.host;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The one way the adapters call glibc through FFM (the confined file calls, the egress proxy's and
 * the drop log's sockets, the btrfs ioctls): how a function is linked, where its {@code errno}
 * lands, and how a call interrupted by a signal is made again. Each caller keeps its own functions
 * and turns a failure into its own exception; none links or reads {@code errno} another way.
 *
 * <p>Every handle from here takes a call-state segment first ({@link #CALL_STATE}, allocated by the
 * caller, one per call or per thread), into which the call's {@code errno} is captured: read in Java
 * after the call, {@code errno} may already be another call's.
 */
public final class Libc {
    public static final int EINTR = 4;
    /** The layout of the segment a call's {@code errno} is captured into. */
    public static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();

    private static final Linker LINKER = Linker.nativeLinker();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(symbol("strerror"), FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private Libc() {
    }

    /** A call whose negative result means failure, with the reason in the call state's {@code errno}. */
    @FunctionalInterface
    public interface Call {
        long invoke() throws Throwable;
    }

    /** glibc's function {@code name}; the handle takes a call-state segment first. */
    public static MethodHandle function(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(symbol(name), descriptor, Linker.Option.captureCallState("errno"));
    }

    /**
     * A variadic glibc function ({@code open}, {@code ioctl}, {@code syscall}): the arguments from
     * index {@code firstVariadic} on are passed as C passes variadic ones, so the call is ABI-correct.
     */
    public static MethodHandle variadic(String name, FunctionDescriptor descriptor, int firstVariadic) {
        return LINKER.downcallHandle(symbol(name), descriptor, Linker.Option.firstVariadicArg(firstVariadic),
                Linker.Option.captureCallState("errno"));
    }

    /** The {@code errno} the last call made with {@code state} captured. */
    public static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /**
     * Makes the call, and again each time it fails with {@code EINTR}; returns its result (&gt;= 0)
     * or, when it fails otherwise, {@code -errno}. A call that cannot be made at all (a wrong
     * descriptor: a bug, not a system error) throws {@link IllegalStateException} naming {@code what}.
     */
    public static long restarting(String what, MemorySegment state, Call call) {
        while (true) {
            long result = once(what, call);
            if (result >= 0) return result;
            int errno = errno(state);
            if (errno != EINTR) return -errno;
        }
    }

    /** Makes the call once (for {@code close}, which must never be repeated); its result as returned. */
    public static long once(String what, Call call) {
        try {
            return call.invoke();
        } catch (Throwable t) {
            throw new IllegalStateException("native call " + what + " could not be made", t);
        }
    }

    /** glibc's message for {@code errno} ("No such file or directory"). */
    public static String strerror(int errno) {
        try {
            var message = (MemorySegment) STRERROR.invokeExact(errno);
            return message.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    private static MemorySegment symbol(String name) {
        return LINKER.defaultLookup().find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no symbol " + name));
    }
}

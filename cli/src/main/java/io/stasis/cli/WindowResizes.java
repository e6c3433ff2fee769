package io.stasis.cli;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * SIGWINCH, which the local terminal sends when its window changes size, through
 * {@code sun.misc.Signal} where the JDK has it (Linux). Reached by reflection: the JDK warns at
 * compile time about any direct use of {@code sun.misc}, and a JVM without it (or one that refuses
 * the signal) simply gets no resizes.
 */
final class WindowResizes implements AutoCloseable {
    private final Runnable restore;

    private WindowResizes(Runnable restore) {
        this.restore = restore;
    }

    /** Runs {@code onResize} on each SIGWINCH until closed; does nothing where that is not possible. */
    static WindowResizes watch(Runnable onResize) {
        try {
            Class<?> signalType = Class.forName("sun.misc.Signal");
            Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
            Object winch = signalType.getConstructor(String.class).newInstance("WINCH");
            Method handle = signalType.getMethod("handle", signalType, handlerType);
            InvocationHandler calls = (proxy, method, args) -> switch (method.getName()) {
                case "handle" -> {
                    onResize.run();
                    yield null;
                }
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                case "toString" -> "stasis window-resize handler";
                default -> null;
            };
            Object handler = Proxy.newProxyInstance(WindowResizes.class.getClassLoader(), new Class<?>[]{handlerType}, calls);
            Object previous = handle.invoke(null, winch, handler);
            return new WindowResizes(() -> {
                try {
                    handle.invoke(null, winch, previous);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // Leaving our handler installed only means an extra resize message on the way out.
                }
            });
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return new WindowResizes(() -> { });
        }
    }

    @Override
    public void close() {
        restore.run();
    }
}

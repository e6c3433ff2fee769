package io.stasis.bench;

/**
 * Tears the private service down if the JVM is stopped mid-run (Ctrl-C, SIGTERM), so an
 * interrupted benchmark leaves no sandbox, mount or loop device behind. Closing it unregisters it.
 */
final class ShutdownHook implements AutoCloseable {
    private final Thread thread;

    private ShutdownHook(Thread thread) {
        this.thread = thread;
    }

    static ShutdownHook closing(AutoCloseable resource) {
        var thread = new Thread(() -> {
            try {
                resource.close();
            } catch (Exception e) {
                System.err.println("stasis-bench: cleanup on shutdown failed: " + e.getMessage());
            }
        }, "stasis-bench-teardown");
        Runtime.getRuntime().addShutdownHook(thread);
        return new ShutdownHook(thread);
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(thread);
        } catch (IllegalStateException e) {
            // The JVM is already shutting down: the hook is running or has run.
        }
    }
}

package io.stasis.cli;

/**
 * Cleanup that must also happen when the JVM exits on a signal (Ctrl-C while not in raw mode,
 * {@code kill}): a shutdown hook for as long as the guard is open. Closing it only removes the
 * hook; the caller runs the cleanup itself on its normal path.
 */
final class ExitGuard implements AutoCloseable {
    private final Thread hook;

    private ExitGuard(Thread hook) {
        this.hook = hook;
    }

    static ExitGuard of(String name, Runnable cleanup) {
        var hook = new Thread(cleanup, "stasis-" + name);
        Runtime.getRuntime().addShutdownHook(hook);
        return new ExitGuard(hook);
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or about to: it does the cleanup.
        }
    }
}

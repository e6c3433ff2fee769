package io.stasis.network.linux.proxy;

import java.util.ArrayList;
import java.util.List;

/**
 * What to close to stop one connection at once from another thread (an error in the other relay
 * direction, or the proxy closing): closing wakes the threads blocked reading, which then finish.
 * Whatever is added after the abort is closed straight away.
 */
final class Teardown {
    private final List<AutoCloseable> parts = new ArrayList<>(2); // guarded by this
    private boolean aborted; // guarded by this

    void add(AutoCloseable part) {
        synchronized (this) {
            if (!aborted) {
                parts.add(part);
                return;
            }
        }
        closeQuietly(part);
    }

    void abort() {
        List<AutoCloseable> toClose;
        synchronized (this) {
            if (aborted) return;
            aborted = true;
            toClose = List.copyOf(parts);
        }
        toClose.forEach(Teardown::closeQuietly);
    }

    private static void closeQuietly(AutoCloseable part) {
        try {
            part.close();
        } catch (Exception e) {
            // Tearing down a connection that already failed: its first error is the one logged.
        }
    }
}

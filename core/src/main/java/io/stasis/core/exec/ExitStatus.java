package io.stasis.core.exec;

import java.util.Optional;

/**
 * How a process ended. A process killed by a signal has {@code exitCode} 128 + the signal's
 * number, as shells report it, and {@code signal} names it ("KILL").
 */
public record ExitStatus(int exitCode, Optional<String> signal) {
    public static ExitStatus exited(int code) {
        return new ExitStatus(code, Optional.empty());
    }

    public static ExitStatus killed(int signalNumber) {
        return new ExitStatus(128 + signalNumber, Optional.of(Signal.nameOf(signalNumber)));
    }
}

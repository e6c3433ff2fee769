package io.stasis.core.journal;

/**
 * Named points inside multi-step operations where a test can make the service die, to prove that
 * a restart settles every sandbox in a well-defined state. In production nothing happens.
 */
@FunctionalInterface
public interface FaultPoints {
    FaultPoints NONE = step -> { };

    /** Called when an operation reaches {@code step}, e.g. {@code hibernate.after-dump}. */
    void reach(String step);
}

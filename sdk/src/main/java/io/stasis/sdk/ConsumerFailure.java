package io.stasis.sdk;

/**
 * Carries an exception thrown by the caller's listener or consumer past a stream's reconnect
 * handling, which must neither retry nor re-deliver it; unwrapped where the stream gives up.
 */
final class ConsumerFailure extends RuntimeException {
    private final RuntimeException thrown;

    private ConsumerFailure(RuntimeException thrown) {
        super(thrown);
        this.thrown = thrown;
    }

    /** Runs the caller's code, wrapping what it throws. */
    static void call(Runnable callerCode) {
        try {
            callerCode.run();
        } catch (RuntimeException e) {
            throw new ConsumerFailure(e);
        }
    }

    /** What the caller's code threw. */
    RuntimeException thrown() {
        return thrown;
    }
}

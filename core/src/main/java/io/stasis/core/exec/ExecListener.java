package io.stasis.core.exec;

/** Receives a command's output while it runs, in order per stream. Called from one thread. */
@FunctionalInterface
public interface ExecListener {
    ExecListener NONE = (stream, data, offsetAfter) -> { };

    /**
     * @param data        the new bytes
     * @param offsetAfter the stream's byte offset just after {@code data}
     */
    void output(OutputKind stream, byte[] data, long offsetAfter);

    /**
     * A chunk read once for every follower of a process, which starts where this listener stands
     * on both outputs. A listener that encodes what it sends can share the encoding through
     * {@link SharedChunk#encoded}.
     */
    default void shared(SharedChunk chunk) {
        output(chunk.kind(), chunk.data(), chunk.offsetAfter());
    }

    /** The output from {@code from} to {@code to} was dropped to bound its size before it could be passed on. */
    default void dropped(OutputKind stream, long from, long to) {
    }

    /** Whether the one listening has gone (a streaming client disconnected): the command is then killed. */
    default boolean gone() {
        return false;
    }
}

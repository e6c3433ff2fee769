package io.stasis.sdk;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * Receives a streaming command's output as it arrives (see
 * {@link Sandbox#execStream(ExecRequest, ExecOutputListener)}). Called on the thread that called
 * {@code execStream}, one chunk at a time, in the order the server sent them. An exception thrown
 * here aborts the stream and is rethrown by {@code execStream}.
 *
 * <pre>{@code
 * ExecResult r = sandbox.execStream(ExecRequest.of("make", "test"),
 *         ExecOutputListener.writingTo(System.out, System.err));
 * }</pre>
 */
public interface ExecOutputListener {
    /** A listener that ignores the output (the result still collects it). */
    ExecOutputListener IGNORE = new ExecOutputListener() {
    };

    default void onStdout(byte[] chunk) {
    }

    default void onStderr(byte[] chunk) {
    }

    /** Writes each chunk to the given streams and flushes it at once. */
    static ExecOutputListener writingTo(OutputStream stdout, OutputStream stderr) {
        return new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                write(stdout, chunk);
            }

            @Override
            public void onStderr(byte[] chunk) {
                write(stderr, chunk);
            }

            private static void write(OutputStream out, byte[] chunk) {
                try {
                    out.write(chunk);
                    out.flush();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }
}

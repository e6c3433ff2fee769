package io.stasis.sdk;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Receives a command's output as it arrives: of a streaming exec
 * ({@link Sandbox#execStream(ExecRequest, ExecOutputListener)}) or a followed background process
 * ({@link BackgroundProcess#follow(ExecOutputListener)}). Called on the thread that called
 * {@code execStream} or {@code follow}, one chunk at a time, in the order the server sent them. An
 * exception thrown here aborts the stream and is rethrown by the call.
 *
 * <pre>{@code
 * ExecResult r = sandbox.execStream(ExecRequest.of("make", "test"),
 *         ExecOutputListener.writingTo(System.out, System.err));
 * process.follow(ExecOutputListener.text(line -> log.info(line), line -> log.warn(line)));
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

    /**
     * A followed process's output from byte {@code from} to {@code to} of {@code stream}
     * ({@code "stdout"} or {@code "stderr"}) was dropped before it could be read: the server keeps
     * only the last part of each stream (64 MiB by default). The output goes on from {@code to}.
     */
    default void onDropped(String stream, long from, long to) {
    }

    /**
     * Hands each chunk to {@code stdout} or {@code stderr} as UTF-8 text (the server cuts chunks
     * between characters; bytes that are not UTF-8 become U+FFFD). Chunks are not lines.
     */
    static ExecOutputListener text(Consumer<String> stdout, Consumer<String> stderr) {
        return new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                stdout.accept(new String(chunk, StandardCharsets.UTF_8));
            }

            @Override
            public void onStderr(byte[] chunk) {
                stderr.accept(new String(chunk, StandardCharsets.UTF_8));
            }
        };
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

package io.stasis.sdk;

import java.util.concurrent.CompletableFuture;

/**
 * A background process's output followed without blocking the caller: the listener gets each
 * chunk on the subscription's own thread, in order, each byte exactly once across reconnects, and
 * {@link #exit()} completes once the process has ended and all its output was delivered.
 *
 * <pre>{@code
 * var server = sandbox.processes().start(ProcessRequest.of("python3", "-m", "http.server"));
 * try (var output = server.subscribe(ExecOutputListener.text(System.out::print, System.err::print))) {
 *     ...                                  // the caller goes on; output arrives meanwhile
 *     output.exit().thenAccept(end -> System.out.println("ended: " + end.exitCode()));
 * }
 * }</pre>
 */
public final class OutputSubscription extends StreamedSubscription {
    private final CompletableFuture<ProcessInfo> exit = new CompletableFuture<>();
    private final BackgroundStream stream;

    private OutputSubscription(BackgroundProcess process, HttpTransport transport, String outputPath, ExecOutputListener listener,
                               long stdoutOffset, long stderrOffset) {
        this.stream = BackgroundStream.start("stasis-output-" + process.pid(), background -> {
            try {
                var follower = new ProcessOutputFollower(transport, outputPath, listener, new Reconnects(background::pause,
                        Reconnects.GIVE_UP_AFTER), stdoutOffset, stderrOffset, background::reading, background::isClosing);
                ExecWire.Exit end = follower.follow();
                if (end == null) exit.cancel(false);
                else exit.complete(process.ended(end));
            } catch (RuntimeException e) {
                exit.completeExceptionally(e);
                throw e;
            }
        });
    }

    static OutputSubscription start(BackgroundProcess process, HttpTransport transport, String outputPath, ExecOutputListener listener,
                                    long stdoutOffset, long stderrOffset) {
        return new OutputSubscription(process, transport, outputPath, listener, stdoutOffset, stderrOffset);
    }

    /**
     * The process as it ended, once its whole output was delivered; completes exceptionally with
     * what ended the subscription if it failed (a connection that could not be restored, what the
     * listener threw), and is cancelled if the subscription was closed first.
     */
    public CompletableFuture<ProcessInfo> exit() {
        return exit;
    }

    @Override
    BackgroundStream stream() {
        return stream;
    }

    @Override
    public void close() {
        super.close();
        exit.cancel(false); // a no-op once it completed
    }
}

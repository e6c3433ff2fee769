package io.stasis.cli;

import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.ProcessInfo;
import io.stasis.sdk.ProcessRequest;
import io.stasis.sdk.StasisClientException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * {@code stasis exec -i} without a terminal: the command runs as a background process with its
 * stdin open; the CLI's stdin is sent as it comes (end of file closes it), the output is streamed
 * back, and the process is forgotten once it ended. Unlike {@code exec --stdin}, nothing is read
 * ahead, so a pipe that never ends works too.
 */
final class InteractiveExec {
    private final StasisCommand root;
    private final String sandbox;

    InteractiveExec(StasisCommand root, String sandbox) {
        this.root = root;
        this.sandbox = sandbox;
    }

    int run(ProcessRequest.Builder request) {
        CliIo io = root.io();
        BackgroundProcess process = root.client().sandboxes().processes(sandbox).start(request.stdin(true).build());
        ProcessInfo end;
        ExitGuard stopOnExit = ExitGuard.of("stop-command", () -> terminate(process));
        try {
            Thread.ofVirtual().name("stasis-exec-input").start(() -> pump(io.in(), process));
            end = process.follow(new OutputPrinter(io));
        } finally {
            stopOnExit.close();
        }
        io.out().flush();
        forget(process);
        return ProcessExit.code(end, io);
    }

    /** Copies the CLI's stdin to the process until either ends. */
    private static void pump(InputStream in, BackgroundProcess process) {
        byte[] buffer = new byte[64 * 1024];
        try {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                if (n > 0) process.sendStdin(Arrays.copyOf(buffer, n));
            }
            process.closeStdin();
        } catch (IOException | StasisClientException e) {
            // It ended (409) or stdin failed: nothing more to send.
        }
    }

    /** The CLI is being killed: so is the command, as a local one would be. */
    private static void terminate(BackgroundProcess process) {
        try {
            process.signal("TERM");
        } catch (StasisClientException e) {
            // Already ended.
        }
    }

    private static void forget(BackgroundProcess process) {
        try {
            process.forget();
        } catch (StasisClientException e) {
            // It stays in the list of ended processes; harmless.
        }
    }
}

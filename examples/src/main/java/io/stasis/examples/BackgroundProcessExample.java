package io.stasis.examples;

import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecOutputListener;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ProcessInfo;
import io.stasis.sdk.ProcessRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import java.time.Duration;

/**
 * A long-running process in the background, its output streamed as it comes; then a command
 * whose output is streamed while it runs ({@code execStream}).
 */
public final class BackgroundProcessExample {
    private BackgroundProcessExample() {
    }

    public static void main(String[] args) {
        try (StasisClient client = Connect.fromEnvironment()) {
            Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
            try {
                BackgroundProcess counter = sandbox.processes().start(ProcessRequest.builder(
                        "sh", "-c", "for i in 1 2 3 4 5; do echo tick $i; sleep 1; done; echo done >&2")
                        .tag("counter")
                        .build());
                System.out.println("started pid " + counter.pid());

                // Blocks until the process ends; a dropped connection resumes where it was.
                ProcessInfo ended = counter.follow(ExecOutputListener.text(System.out::print, System.err::print));
                System.out.println("exit code " + ended.exitCode());

                // A foreground command with its output streamed while it runs, and a timeout.
                var build = ExecRequest.builder("sh", "-c", "for i in 1 2 3; do echo step $i; sleep 1; done")
                        .timeout(Duration.ofMinutes(2))
                        .build();
                var result = sandbox.execStream(build, ExecOutputListener.text(System.out::print, System.err::print));
                System.out.println("exit code " + result.exitCode());
            } finally {
                sandbox.delete();
            }
        }
    }
}

package io.stasis.testkit;

import io.stasis.core.exec.ExitStatus;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SpawnSpec;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Runs commands straight through a {@link SandboxRuntime}, for suites below the service layer. */
public final class Commands {
    public static final Map<String, String> ENV = Map.of("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME", "/root");

    private Commands() {
    }

    /** What a finished command printed and how it ended. */
    public record Result(ExitStatus exit, String stdout, String stderr) {
        public int code() {
            return exit.exitCode();
        }
    }

    public static Result run(SandboxRuntime runtime, SandboxId id, String... argv) {
        return run(runtime, id, new SpawnSpec(List.of(argv), Optional.empty(), ENV, Optional.empty()), Duration.ofSeconds(30));
    }

    /** Runs {@code sh -c script}. */
    public static Result sh(SandboxRuntime runtime, SandboxId id, String script) {
        return run(runtime, id, "sh", "-c", script);
    }

    public static Result run(SandboxRuntime runtime, SandboxId id, SpawnSpec spec, Duration timeout) {
        try (ExecHandle handle = runtime.spawn(id, spec)) {
            Optional<ExitStatus> exit = handle.awaitExit(timeout);
            if (exit.isEmpty()) {
                handle.killTree();
                throw new AssertionError("command " + spec.argv() + " did not end within " + timeout);
            }
            return new Result(exit.get(), readAll(handle, OutputKind.STDOUT), readAll(handle, OutputKind.STDERR));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public static String readAll(ExecHandle handle, OutputKind kind) {
        var out = new ByteArrayOutputStream();
        while (true) {
            byte[] chunk = handle.read(kind, out.size(), 1 << 20);
            if (chunk.length == 0) return out.toString(StandardCharsets.UTF_8);
            out.writeBytes(chunk);
        }
    }
}

package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an OCI runtime's command line is run, for {@link Runc} and {@link Runsc}, whose flags and
 * verbs each of them owns: its state directory ({@code --root}), a JSON log per sandbox and step
 * ({@code --log}), a timeout that kills the tool's whole tree, and failures that quote the tool's
 * own words (the last error of its log, the tail of its stderr).
 */
final class OciCli {
    private static final Logger log = LoggerFactory.getLogger(OciCli.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final File DEV_NULL = new File("/dev/null");
    /** The most of a tool's stdout or stderr a call reads back (a tool gone wrong could write without end). */
    private static final int MAX_OUTPUT_BYTES = 4 << 20;

    private final String name;
    private final Path binary;
    private final Path stateRoot;
    private final Path logDir;
    private final Duration timeout;
    private final List<String> globalFlags;
    private final Map<String, String> environment;

    /**
     * @param name        the tool's name in errors and logs ("runc", "runsc")
     * @param globalFlags flags before the verb on every call, after {@code --root} and {@code --log}
     * @param environment what every call runs with besides the service's own environment
     */
    OciCli(String name, Path binary, Path stateRoot, Path logDir, Duration timeout, List<String> globalFlags, Map<String, String> environment) {
        this.name = name;
        this.binary = binary;
        this.stateRoot = stateRoot;
        this.logDir = logDir;
        this.timeout = timeout;
        this.globalFlags = List.copyOf(globalFlags);
        this.environment = Map.copyOf(environment);
    }

    Path stateRoot() {
        return stateRoot;
    }

    /**
     * Runs the tool with {@code args} after the global flags; returns its stdout. With
     * {@code detachedStdio} its stdio is /dev/null and nothing is returned: a tool that hands its fds
     * to a sandbox it starts must not tie the sandbox to a pipe of the service.
     */
    String run(SandboxId id, String step, boolean detachedStdio, Map<String, String> environment, String... args) {
        return run(List.of(), id, step, detachedStdio, environment, args);
    }

    /** The same, the tool started by {@code launcher} (a program that runs the rest of its command line). */
    String run(List<String> launcher, SandboxId id, String step, boolean detachedStdio, Map<String, String> environment, String... args) {
        Path log = logFile(id, step);
        var argv = new ArrayList<String>(launcher);
        argv.addAll(List.of(binary.toString(), "--root", stateRoot.toString(),
                "--log", log.toString(), "--log-format", "json"));
        argv.addAll(globalFlags);
        argv.addAll(List.of(args));
        long start = System.nanoTime();
        Process process = null;
        // Output goes to files, not pipes: the tool outlives a service killed mid-call (a dump goes on to
        // its end, see SandboxRuntime#awaitEarlierWork), and a write to a pipe nobody reads would end it.
        Path out = null;
        Path err = null;
        try {
            // One pair per call: calls for the same sandbox and step may run at once (state, say).
            out = detachedStdio ? null : Files.createTempFile(log.getParent(), name + "-" + step + "-", ".out");
            err = detachedStdio ? null : Files.createTempFile(log.getParent(), name + "-" + step + "-", ".err");
            var builder = new ProcessBuilder(argv).redirectInput(DEV_NULL);
            builder.environment().putAll(this.environment);
            builder.environment().putAll(environment);
            if (detachedStdio) builder.redirectOutput(DEV_NULL).redirectError(DEV_NULL);
            else builder.redirectOutput(out.toFile()).redirectError(err.toFile());
            process = ToolRunner.start(builder);
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                ToolRunner.killTree(process); // what the tool started (CRIU under runc) too: a timed-out call leaves no tool behind
                throw failure(id, step, "timed out after " + timeout.toMillis() + " ms" + stderr(err), log, null);
            }
            if (process.exitValue() != 0)
                throw failure(id, step, "exited with " + process.exitValue() + ": " + tail(read(err)), log, null);
            OciCli.log.atDebug().addKeyValue("tool", name).addKeyValue("sandbox", id).addKeyValue("step", step)
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("runtime tool ok");
            return detachedStdio ? "" : read(out);
        } catch (IOException e) {
            throw failure(id, step, "could not start " + binary + ": " + e.getMessage(), log, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(id, step, "interrupted", log, e);
        } finally {
            if (process != null && process.isAlive()) ToolRunner.killTree(process);
            deleteQuietly(out);
            deleteQuietly(err);
        }
    }

    /**
     * Waits, up to {@code timeout}, until no process of this tool working on this state directory
     * is left (one an earlier run of the service started: its calls go on without it, see
     * {@link #run}); returns how many there were. Settling sandboxes on the outcome of that work,
     * not on its middle, is the reconciler's need (SandboxRuntime#awaitEarlierWork).
     */
    int awaitEarlierWork(Duration timeout) {
        var earlier = atWork();
        if (earlier.isEmpty()) return 0;
        log.atInfo().addKeyValue("tool", name).addKeyValue("pids", earlier).log("tool processes of an earlier run are at work; waiting for them to end");
        long deadline = System.nanoTime() + timeout.toNanos();
        for (long pid : earlier) {
            HostProcesses.awaitEnd(pid, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if (HostProcesses.isAlive(pid)) {
                log.atWarn().addKeyValue("tool", name).addKeyValue("pid", pid).addKeyValue("timeoutMs", timeout.toMillis())
                        .log("a tool process of an earlier run is still at work; settling without its outcome");
                break;
            }
        }
        return earlier.size();
    }

    /**
     * Host pids of this tool's processes working on this state directory now (a process's command
     * line starts with the binary and names the directory after {@code --root}). Not what such a
     * tool leaves running under other names (runsc's sentry and gofer are runsc-sandbox and runsc-gofer).
     */
    private List<Long> atWork() {
        return HostProcesses.matching(pid -> {
            List<String> argv = HostProcesses.commandLine(pid);
            int root = argv.indexOf("--root");
            return !argv.isEmpty() && argv.getFirst().equals(binary.toString()) && root >= 0 && root + 1 < argv.size()
                    && argv.get(root + 1).equals(stateRoot.toString());
        });
    }

    /** The directory of a sandbox's logs, made if missing. */
    Path logDir(SandboxId id) {
        Path dir = id == null ? logDir : logDir.resolve(id.value());
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dir;
    }

    private Path logFile(SandboxId id, String step) {
        return logDir(id).resolve(name + "-" + step + ".log");
    }

    private StasisException failure(SandboxId id, String step, String problem, Path log, Throwable cause) {
        return StasisException.runtimeFailed(id == null ? null : id.value(), name + " " + step, problem + logTail(log), cause);
    }

    /** The last error the tool logged (its log is JSON lines with a "msg" field). */
    private String logTail(Path log) {
        try {
            if (!Files.exists(log)) return "";
            var lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            for (int i = lines.size() - 1; i >= 0; i--) {
                JsonNode node = JSON.readTree(lines.get(i));
                if ("error".equals(node.path("level").asText())) return "; " + name + ": " + node.path("msg").asText();
            }
            return "";
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private static String tail(String text) {
        String t = text.strip();
        return t.length() <= ToolRunner.TAIL_CHARS ? t : "..." + t.substring(t.length() - ToolRunner.TAIL_CHARS);
    }

    private static String stderr(Path err) {
        String text = tail(read(err));
        return text.isEmpty() ? "" : "; stderr: " + text;
    }

    private static void deleteQuietly(Path file) {
        if (file == null) return;
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // a leftover in the sandbox's log directory, removed with it
        }
    }

    /**
     * What the tool wrote to {@code file}, its last {@value #MAX_OUTPUT_BYTES} bytes at most (the
     * tools' own answers, such as a state, are far smaller); nothing when its output went to /dev/null.
     */
    private static String read(Path file) {
        if (file == null) return "";
        try (var channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            var bytes = ByteBuffer.allocate((int) Math.min(size, MAX_OUTPUT_BYTES));
            channel.position(size - bytes.capacity());
            while (bytes.hasRemaining() && channel.read(bytes) >= 0) {
                // until the buffer is full or the file ends
            }
            return new String(bytes.array(), 0, bytes.position(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}

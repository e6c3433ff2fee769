package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.testkit.HostLeaks;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** The service as its own process, started from the packaged jar, so a test can kill it with SIGKILL. */
final class ServiceProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

    final Process process;
    final String url;

    private ServiceProcess(Process process, String url) {
        this.process = process;
        this.url = url;
    }

    static ServiceProcess start(Path dataDir, Path log) throws Exception {
        return start(dataDir, log, Map.of());
    }

    /** @param environment added to the service's environment (e.g. STASIS_FAULT_POINT) */
    static ServiceProcess start(Path dataDir, Path log, Map<String, String> environment, String... extraFlags) throws Exception {
        return launch(dataDir, log, environment, extraFlags).await();
    }

    /** A service started and not yet listening: a test may kill it while it starts. */
    record Starting(Process process, CompletableFuture<String> url) {
        ServiceProcess await() throws Exception {
            try {
                return new ServiceProcess(process, url.get(120, TimeUnit.SECONDS));
            } catch (Exception e) {
                process.destroyForcibly();
                throw e;
            }
        }
    }

    /** Starts the service without waiting for it to listen. */
    static Starting launch(Path dataDir, Path log, Map<String, String> environment, String... extraFlags) throws IOException {
        return launch(dataDir, log, environment, aotCache(log), extraFlags);
    }

    private static Starting launch(Path dataDir, Path log, Map<String, String> environment, List<String> jvmFlags,
                                   String... extraFlags) throws IOException {
        Path jar = jar();
        // C1 only: a service the fault suites kill and start again a few hundred times never runs long
        // enough for C2's code to pay for its compiles (3.5 s of CPU to listen, 2.0 s without C2).
        var argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1"));
        argv.addAll(jvmFlags);
        argv.addAll(List.of("-jar", jar.toString(), "--port", "0", "--data-dir", dataDir.toString(),
                "--preview-port", "0", "--pool-size", "4G", "--standby-swap", "1G", "--warm-pool-max", "2", // as ServiceFixture's
                "--default-template", "tiny", "--no-slow-templates"));
        argv.addAll(TestNetworkFlags.forDataDir(dataDir));
        argv.addAll(TestNetworkFlags.BUCKET_ENDPOINTS);
        argv.addAll(List.of(extraFlags));
        var builder = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(environment);
        var process = builder.start();
        var url = new CompletableFuture<String>();
        Thread.ofVirtual().start(() -> {
            try (var reader = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    var m = LISTENING.matcher(line);
                    if (m.find()) url.complete(m.group(1));
                    // Into the log too: what the JVM prints there when it crashes is the only trace of why.
                    Files.writeString(log, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                }
                url.completeExceptionally(new IllegalStateException("the service exited before listening; see " + log));
            } catch (IOException e) {
                url.completeExceptionally(e);
            }
        });
        return new Starting(process, url);
    }

    private static Path jar() {
        Path jar = Path.of("target", "stasis-server.jar").toAbsolutePath();
        if (!Files.exists(jar)) throw new IllegalStateException("package the server first: " + jar + " is missing");
        return jar;
    }

    private static final Path AOT_CACHE = Path.of("target", "stasis-server.aot").toAbsolutePath();
    private static final List<String> QUIET_AOT = List.of("-Xlog:aot*=off", "-Xlog:cds*=off");
    private static List<String> aotFlags;

    /**
     * The JVM flags that start the service from its ahead-of-time cache (as {@code ./stasis up} does),
     * which halves the time to listen: the fault suites start it hundreds of times. Made once per
     * build by a training start that serves one sandbox's create, exec and delete, then stops.
     * Without a cache (the training failed), none. Test JVMs running side by side take turns
     * (a file lock): one trains, the others use its cache.
     */
    private static synchronized List<String> aotCache(Path log) {
        if (aotFlags != null) return aotFlags;
        aotFlags = List.of();
        Path dataDir = null;
        try (var turn = FileChannel.open(AOT_CACHE.resolveSibling("stasis-server.aot.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             var _ = turn.lock()) {
            if (!Files.exists(AOT_CACHE) || Files.getLastModifiedTime(AOT_CACHE).compareTo(Files.getLastModifiedTime(jar())) < 0) {
                Files.deleteIfExists(AOT_CACHE);
                dataDir = Files.createTempDirectory("stasis-aot-training");
                var flags = new ArrayList<>(List.of("-XX:AOTCacheOutput=" + AOT_CACHE));
                flags.addAll(QUIET_AOT);
                try (var training = launch(dataDir, log, Map.of(), flags, "--warm-pool", "0").await();
                     var api = new RawApi(training.url, Files.readString(dataDir.resolve("root.key")).strip())) {
                    String id = api.post("/v1/sandboxes", "{}").get("id").asText();
                    api.sh(id, "echo trained");
                    api.call("DELETE", "/v1/sandboxes/" + id, null);
                }
                assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
                ServiceFixture.deleteTree(dataDir);
                dataDir = null;
            }
            if (Files.exists(AOT_CACHE)) {
                var flags = new ArrayList<>(List.of("-XX:AOTCache=" + AOT_CACHE));
                flags.addAll(QUIET_AOT);
                aotFlags = List.copyOf(flags);
            }
        } catch (Exception | AssertionError e) {
            System.out.println("no AOT cache for the service (it starts slower): " + e);
            // a training cut short leaves its pool mounted: one more start (without the cache) removes it
            if (dataDir != null) {
                try {
                    removeLeftovers(dataDir, log, null);
                } catch (Exception | AssertionError cleanup) {
                    System.out.println("the AOT training left " + dataDir + ": " + cleanup);
                }
            }
        }
        return aotFlags;
    }

    /**
     * After a test killed the service: one last start removes the sandbox it left running, then
     * nothing of it may remain on the host, and the data directory goes.
     */
    static void removeLeftovers(Path dataDir, Path log, String sandbox, String... flags) throws Exception {
        try (var last = start(dataDir, log, Map.of(), flags);
             var api = new RawApi(last.url, Files.readString(dataDir.resolve("root.key")).strip())) {
            if (sandbox != null) api.call("DELETE", "/v1/sandboxes/" + sandbox, null);
        }
        if (sandbox != null) {
            var id = Set.of(new SandboxId(sandbox));
            assertThat(HostLeaks.processesOf(id)).isEmpty();
            assertThat(HostLeaks.cgroupsOf(id)).isEmpty();
        }
        assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15)))
                .isEmpty();
        ServiceFixture.deleteTree(dataDir);
    }

    /** Waits for the process to end by itself (a fault point halted it). */
    boolean awaitDeath(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** SIGKILL: no shutdown hook runs. Fails if the process outlives it by 30 s, naming where its threads are stuck. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS))
            throw new IllegalStateException("the service (pid " + process.pid() + ") did not end within 30 s of SIGKILL; " + stuckThreads());
    }

    /** Threads of the process in uninterruptible sleep, with the kernel function each waits in: what holds a killed process up. */
    private String stuckThreads() {
        var stuck = new ArrayList<String>();
        try (var tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
            for (Path task : tasks.toList()) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    if (stat.substring(stat.lastIndexOf(')') + 2).startsWith("D"))
                        stuck.add(task.getFileName() + " in " + Files.readString(task.resolve("wchan")).strip());
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return "its tasks cannot be listed: " + e.getMessage();
        }
        return stuck.isEmpty() ? "no thread in uninterruptible sleep" : "threads in uninterruptible sleep: " + stuck;
    }

    /** The last {@code lines} lines of a service log, for a failure's message. */
    static String logTail(Path log, int lines) {
        try {
            var all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(the log cannot be read: " + e.getMessage() + ")";
        }
    }

    /** SIGTERM and wait for the orderly shutdown. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) process.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}

package io.stasis.bench;

import io.stasis.sdk.StasisClient;
import io.stasis.testkit.HostLeaks;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * {@code java -jar stasis-server.jar} of the checkout, as {@code ./stasis up} runs it, on a scratch
 * data directory and network of its own: the scenarios that need a JVM of its own (a fresh start,
 * a SIGKILL of the service). Closing it deletes its sandboxes, stops it with SIGTERM, checks that
 * it left nothing on the host and removes the directory.
 */
final class ServerProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("^listening on (http://\\S+)");

    private final Checkout checkout;
    private final Path dataDir;
    private final BenchNetwork network;
    private final List<String> flags;
    private final Progress progress;
    private Process process;
    private StasisClient client;
    private String url;
    private double startMs;

    private ServerProcess(Checkout checkout, Path dataDir, List<String> flags, Progress progress) {
        this.checkout = checkout;
        this.dataDir = dataDir;
        this.network = BenchNetwork.forDataDir(dataDir);
        this.flags = List.copyOf(flags);
        this.progress = progress;
    }

    /** Started on a new scratch directory with these extra flags; returns once it listens. */
    static ServerProcess start(Checkout checkout, List<String> moreFlags, Progress progress) throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-bench-server-");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        var server = new ServerProcess(checkout, dataDir, moreFlags, progress);
        try {
            server.launch();
        } catch (Exception e) {
            PrivateService.deleteTree(dataDir);
            throw e;
        }
        return server;
    }

    StasisClient client() {
        return client;
    }

    Path dataDir() {
        return dataDir;
    }

    /** Milliseconds from the JVM's start to "listening on", of the last start. */
    double startMs() {
        return startMs;
    }

    /**
     * Kills the service as SIGKILL does (its sandboxes keep running), then starts it again on the
     * same directory and port; the client stays, as an agent's would, and finds its connections gone.
     */
    void killAndRestart() throws Exception {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) throw new IllegalStateException("the killed server did not end");
        launch();
    }

    private void launch() throws Exception {
        String port = url == null ? "0" : Integer.toString(URI.create(url).getPort());
        var argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED"));
        checkout.serverAotCache().ifPresent(cache -> argv.addAll(List.of("-XX:AOTCache=" + cache, "-Xlog:aot*=off", "-Xlog:cds*=off")));
        argv.addAll(List.of("-jar", checkout.serverJar().toString(),
                "--port", port, "--data-dir", dataDir.toString(), "--pool-size", "8G", "--no-slow-templates", "--standby-swap", "2G",
                "--default-template", "tiny", "--pause-after-idle", "never", "--standby-after-idle", "never",
                "--hibernate-after-idle", "never", "--checkpoint-uploads", "on-request"));
        argv.addAll(network.flags());
        argv.addAll(flags);
        progress.say("starting a server JVM on %s %s%s", dataDir, String.join(" ", flags),
                checkout.serverAotCache().map(c -> " (from the AOT cache " + c + ")").orElse(" (no AOT cache: run ./stasis up once)"));
        long start = System.nanoTime();
        Process started = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.PIPE).start();
        var listening = new CompletableFuture<String>();
        Thread.ofVirtual().start(() -> {
            var last = new java.util.ArrayDeque<String>(); // what a server that ends before it listens said last
            try (var lines = new BufferedReader(new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    var m = LISTENING.matcher(line);
                    if (m.find()) listening.complete(m.group(1));
                    if (!listening.isDone()) {
                        if (last.size() == 40) last.removeFirst();
                        last.addLast(line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            listening.completeExceptionally(new IllegalStateException("the server ended before it listened; its last lines:\n"
                    + String.join("\n", last)));
        });
        String listeningOn;
        try {
            listeningOn = listening.get(3, TimeUnit.MINUTES);
        } catch (Exception e) {
            started.destroyForcibly();
            throw e;
        }
        startMs = Format.millis(System.nanoTime() - start);
        process = started;
        if (client != null) return;
        url = listeningOn;
        String key = Files.readString(dataDir.resolve("root.key")).strip();
        client = StasisClient.builder().url(url).apiKey(key).requestTimeout(Duration.ofMinutes(2)).build();
    }

    @Override
    public void close() throws Exception {
        try (var c = client) {
            for (var sandbox : c.sandboxes().list().stream().toList()) sandbox.delete();
        } finally {
            process.destroy(); // SIGTERM: the service stops, nothing of it may stay
            if (!process.waitFor(60, TimeUnit.SECONDS)) process.destroyForcibly();
        }
        var left = new ArrayList<String>();
        left.addAll(Leftovers.mountsUnder(dataDir));
        left.addAll(Leftovers.loopDevicesBackedBy(dataDir));
        left.addAll(Leftovers.networkOf(network.table(), network.interfacePrefix()));
        left.addAll(HostLeaks.swapFilesUnder(dataDir));
        if (!left.isEmpty()) throw new IllegalStateException("the server JVM left " + left + " (kept " + dataDir + ")");
        PrivateService.deleteTree(dataDir);
    }
}

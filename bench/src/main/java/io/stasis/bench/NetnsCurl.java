package io.stasis.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The only class that runs {@code curl}: the host's curl, run by {@code nsenter} inside a
 * sandbox's network namespace (that of one of its processes), so its connections leave through
 * the sandbox's link and meet the sandbox's rules, the egress proxy's redirect included. The name
 * is pinned to an address with {@code --resolve} (no lookup), the origin trusted with
 * {@code --cacert}; the body goes to {@code /dev/null}. Times are curl's own, from the start of
 * the transfer, so the process start of nsenter and curl is not in them.
 */
final class NetnsCurl {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    /**
     * One download as curl timed it.
     *
     * @param status  the HTTP status, or 0 when no response came
     * @param bytes   body bytes received
     * @param connect seconds until the TCP connection was made
     * @param tls     seconds until the TLS handshake was done
     * @param ttfb    seconds until the first byte of the response
     * @param total   seconds until the last byte
     * @param error   why curl failed (its exit status and message); empty when it did not
     */
    record Download(int status, long bytes, double connect, double tls, double ttfb, double total, String error) {
        static Download failed(int exit, String stderr) {
            return new Download(0, 0, 0, 0, 0, 0, "curl exited " + exit + ": " + stderr.strip());
        }

        boolean ok() {
            return error.isEmpty() && status == 200;
        }

        double mibPerSecond() {
            return bytes / total / (1 << 20);
        }
    }

    private NetnsCurl() {
    }

    /** GETs {@code https://name:port/path} with {@code name} pinned to {@code address}, from inside the namespace of {@code pid}. */
    static Download get(long pid, String name, String address, int port, Path caPem, String path, Duration connectTimeout)
            throws IOException {
        var argv = List.of("nsenter", "-t", Long.toString(pid), "-n", "curl", "-sS", "-o", "/dev/null", "--cacert", caPem.toString(),
                "--resolve", name + ":" + port + ":" + address, "--connect-timeout", Double.toString(connectTimeout.toMillis() / 1000.0),
                "--max-time", Long.toString(TIMEOUT.toSeconds()), "-w",
                "%{http_code} %{size_download} %{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total}",
                "https://" + name + ":" + port + path);
        Process process = new ProcessBuilder(argv).start();
        try {
            var out = CompletableFuture.supplyAsync(() -> read(process.getInputStream()), Thread::startVirtualThread);
            var err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()), Thread::startVirtualThread);
            if (!process.waitFor(TIMEOUT.toMillis() + 10_000, TimeUnit.MILLISECONDS))
                throw new IOException("curl in the namespace of " + pid + " did not finish within " + TIMEOUT);
            String[] w = out.join().strip().split(" ");
            if (process.exitValue() != 0 || w.length != 6)
                return Download.failed(process.exitValue(), err.join());
            return new Download(Integer.parseInt(w[0]), Long.parseLong(w[1]), Double.parseDouble(w[2]), Double.parseDouble(w[3]),
                    Double.parseDouble(w[4]), Double.parseDouble(w[5]), "");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while curl ran", e);
        } finally {
            if (process.isAlive()) process.destroyForcibly();
        }
    }

    private static String read(InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}

package io.stasis.mounts.fuse;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.host.FileTrees;
import io.stasis.host.HelperFiles;
import io.stasis.testkit.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * stasis-pin itself, driven by Java's own SOCKS5 client: it reaches its one endpoint, at the pinned
 * address, by name or address, and nothing else; its program gets the proxy and dies with it.
 */
@Tag("root")
class StasisPinIT {
    private static final String NAME = "bucket.stasis.invalid"; // resolves nowhere: only the pin gets there
    private Path dir;
    private ServerSocket endpoint;
    private Process pin;
    private int proxyPort;

    @BeforeEach
    void start() throws IOException {
        dir = Files.createTempDirectory("stasis-pin-");
        endpoint = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::answerOnce);
        Path binary = HelperFiles.install(Rclone.class, dir, Rclone.PIN);
        // the program prints the proxy it was given, then waits; the pin serves meanwhile
        pin = new ProcessBuilder(binary.toString(), NAME, Integer.toString(endpoint.getLocalPort()), "127.0.0.1",
                "/bin/sh", "-c", "echo \"$HTTPS_PROXY $HTTP_PROXY\"; exec sleep 60").redirectErrorStream(true).start();
        String line = new BufferedReader(new InputStreamReader(pin.getInputStream(), UTF_8)).readLine();
        assertThat(line).matches("socks5://127\\.0\\.0\\.1:\\d+ socks5://127\\.0\\.0\\.1:\\d+");
        proxyPort = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1));
    }

    @AfterEach
    void stop() throws IOException, InterruptedException {
        if (pin != null) {
            pin.destroyForcibly();
            pin.waitFor(10, TimeUnit.SECONDS);
        }
        endpoint.close();
        FileTrees.deleteRecursively(dir);
    }

    /** Accepts connections to the endpoint and answers each with one line. */
    private void answerOnce() {
        while (!endpoint.isClosed()) {
            try (Socket s = endpoint.accept()) {
                s.getOutputStream().write("endpoint\n".getBytes(UTF_8));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private String through(InetSocketAddress target) throws IOException {
        try (var socket = new Socket(new Proxy(Proxy.Type.SOCKS, new InetSocketAddress("127.0.0.1", proxyPort)))) {
            socket.connect(target, 5_000);
            return new BufferedReader(new InputStreamReader(socket.getInputStream(), UTF_8)).readLine();
        }
    }

    @Test
    void theEndpointIsReachedByItsNameAndByThePinnedAddress() throws IOException {
        int port = endpoint.getLocalPort();
        assertThat(through(InetSocketAddress.createUnresolved(NAME, port))).isEqualTo("endpoint");
        assertThat(through(InetSocketAddress.createUnresolved(NAME.toUpperCase(), port))).isEqualTo("endpoint");
        assertThat(through(new InetSocketAddress("127.0.0.1", port))).isEqualTo("endpoint");
    }

    @Test
    void everyOtherTargetIsRefused() throws IOException {
        int port = endpoint.getLocalPort();
        try (var other = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            for (var target : List.of(InetSocketAddress.createUnresolved("other.stasis.invalid", port),
                    InetSocketAddress.createUnresolved("localhost", port),
                    new InetSocketAddress("127.0.0.2", port),
                    InetSocketAddress.createUnresolved(NAME, other.getLocalPort()),
                    new InetSocketAddress("127.0.0.1", other.getLocalPort())))
                assertThatThrownBy(() -> through(target)).as(target.toString()).isInstanceOf(SocketException.class)
                        .hasMessageContaining("not allowed");
        }
    }

    @Test
    void theProgramDiesWithItsPin() throws InterruptedException {
        // The shell printed its line before it became the sleep: wait for the exec.
        Await.until("the program, the pin's child", Duration.ofSeconds(10), () -> program().isPresent());
        var program = program();
        pin.destroyForcibly();
        assertThat(program.get().onExit().completeOnTimeout(null, 10, TimeUnit.SECONDS).join()).as("ended").isNotNull();
        assertThat(program.get().isAlive()).isFalse();
    }

    private Optional<ProcessHandle> program() {
        return pin.children().filter(p -> p.info().command().orElse("").endsWith("sleep")).findFirst();
    }

    @Test
    void theProgramsStatusIsThePins() throws Exception {
        var ends = new ProcessBuilder(HelperFiles.install(Rclone.class, dir, Rclone.PIN).toString(), NAME, "80", "127.0.0.1,::1",
                "/bin/sh", "-c", "kill -TERM $$").start();
        assertThat(ends.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ends.exitValue()).as("128 + SIGTERM").isEqualTo(143);
        var bad = new ProcessBuilder(HelperFiles.install(Rclone.class, dir, Rclone.PIN).toString(), NAME, "80", "not-an-address", "/bin/true")
                .redirectErrorStream(true).start();
        assertThat(bad.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(bad.exitValue()).isEqualTo(2);
        assertThat(new String(bad.getInputStream().readAllBytes(), UTF_8)).contains("not a list of at most");
    }
}

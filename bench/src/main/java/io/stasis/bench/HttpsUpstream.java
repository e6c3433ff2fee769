package io.stasis.bench;

import io.stasis.testkit.TestNetnsHost;
import java.io.BufferedInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

/**
 * The egress scenario's HTTPS origin: a JVM of its own inside the upstream host's network
 * namespace (started with {@code ip netns exec} by {@link TestNetnsHost#serve}), answering every
 * request on its ports with {@code size} bytes over TLS, one connection per thread. Its key and
 * self-signed certificate for {@link BenchNetwork#UPSTREAM_NAME} are made by the JDK's
 * {@code keytool} (the only class running it); clients trust {@link #caPem()}.
 */
final class HttpsUpstream {
    private static final String PASSWORD = "stasis-bench";
    private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(1);
    private static final int CHUNK = 256 * 1024;

    private final Path caPem;

    private HttpsUpstream(Path caPem) {
        this.caPem = caPem;
    }

    /** Makes the TLS material in {@code dir} and starts the origin on {@code ports} of {@code host}; waits until it listens. */
    static HttpsUpstream start(TestNetnsHost host, Path dir, long size, int... ports) throws IOException {
        Path keystore = dir.resolve("upstream.p12");
        Path pem = dir.resolve("upstream.pem");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        String name = BenchNetwork.UPSTREAM_NAME;
        run(keytool, "-genkeypair", "-alias", "upstream", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=" + name, "-ext", "SAN=dns:" + name, "-ext", "BC=ca:true", "-storetype", "PKCS12",
                "-keystore", keystore.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD);
        run(keytool, "-exportcert", "-rfc", "-alias", "upstream", "-keystore", keystore.toString(), "-storepass", PASSWORD,
                "-file", pem.toString());
        var argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                // An IPv4 socket: the namespace host's readiness check reads /proc/net/tcp, not tcp6.
                "-Djava.net.preferIPv4Stack=true",
                // absolute: the origin runs in dir, where a relative path to the jar (java -jar bench/target/...) leads nowhere
                "-cp", absoluteClassPath(), HttpsUpstream.class.getName(), keystore.toString(), host.address(),
                Long.toString(size)));
        for (int port : ports) argv.add(Integer.toString(port));
        host.serve(dir, argv.toArray(String[]::new));
        try {
            for (int port : ports) host.awaitListening(port);
        } catch (AssertionError e) { // testkit's Await fails as a test would
            throw new IOException("the HTTPS origin did not start listening: " + e.getMessage(), e);
        }
        return new HttpsUpstream(pem);
    }

    private static String absoluteClassPath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(entry -> Path.of(entry).toAbsolutePath().toString()).collect(Collectors.joining(File.pathSeparator));
    }

    /** The origin's certificate (PEM), its own CA. */
    Path caPem() {
        return caPem;
    }

    private static void run(String... argv) throws IOException {
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        try {
            var output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(TOOL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                throw new IOException("keytool " + argv[1] + " did not finish within " + TOOL_TIMEOUT);
            if (process.exitValue() != 0) throw new IOException("keytool " + argv[1] + " exited " + process.exitValue() + ": " + output.strip());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while keytool ran", e);
        } finally {
            if (process.isAlive()) process.destroyForcibly();
        }
    }

    /** {@code java -cp ... HttpsUpstream KEYSTORE ADDRESS SIZE PORT...}: serves until killed. */
    public static void main(String[] args) throws Exception {
        var keys = KeyStore.getInstance("PKCS12");
        try (var in = new FileInputStream(args[0])) {
            keys.load(in, PASSWORD.toCharArray());
        }
        var managers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        managers.init(keys, PASSWORD.toCharArray());
        var tls = SSLContext.getInstance("TLS");
        tls.init(managers.getKeyManagers(), null, null);
        var address = InetAddress.getByName(args[1]);
        long size = Long.parseLong(args[2]);
        byte[] chunk = new byte[CHUNK];
        Arrays.fill(chunk, (byte) 'z');
        var listeners = new ArrayList<Thread>();
        for (String port : Arrays.copyOfRange(args, 3, args.length)) {
            var server = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(Integer.parseInt(port), 64, address);
            listeners.add(Thread.ofPlatform().name("upstream-" + port).start(() -> accept(server, size, chunk)));
        }
        for (Thread listener : listeners) listener.join();
    }

    private static void accept(ServerSocket server, long size, byte[] chunk) {
        while (true) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Thread.ofPlatform().start(() -> serve(socket, size, chunk));
        }
    }

    /** Answers each request on the connection with {@code size} bytes until the client closes it. */
    private static void serve(Socket socket, long size, byte[] chunk) {
        try (socket) {
            InputStream in = new BufferedInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            while (skipHead(in)) {
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " + size + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                for (long left = size; left > 0; left -= chunk.length) out.write(chunk, 0, (int) Math.min(chunk.length, left));
                out.flush();
            }
        } catch (IOException e) {
            // the client went away (or failed its handshake): nothing to answer
        }
    }

    /** Reads a request head; false at the end of the stream. */
    private static boolean skipHead(InputStream in) throws IOException {
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) return false;
            matched = HttpLoad.headEnd(matched, b);
        }
        return true;
    }
}

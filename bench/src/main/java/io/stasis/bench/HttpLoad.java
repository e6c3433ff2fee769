package io.stasis.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A small HTTP/1.1 load generator on plain sockets, in this JVM: GETs of one URL over a connection
 * kept alive for as long as the server keeps it (a response with {@code Connection: close}, or an
 * HTTP/1.0 one without keep-alive, makes the next request open a new connection, and that connect
 * is part of the next request's time). Bodies are read and counted, never kept. Loopback and the
 * sandboxes' links only.
 */
final class HttpLoad {
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    private static final int READ_TIMEOUT_MS = 30_000;
    private static final int MAX_HEAD = 64 * 1024;

    /**
     * Where requests go.
     *
     * @param address the socket address to connect to
     * @param host    the {@code Host} header
     * @param path    the request target
     */
    record Endpoint(InetSocketAddress address, String host, String path) {
        Endpoint withPath(String other) {
            return new Endpoint(address, host, other);
        }
    }

    /**
     * One throughput round.
     *
     * @param requests answered requests (status 200, whole body)
     * @param bytes    body bytes read
     * @param nanos    the round's wall-clock length
     * @param connects connections opened
     */
    record Round(long requests, long bytes, long nanos, long connects) {
        double perSecond() {
            return requests / (nanos / 1e9);
        }

        double mibPerSecond() {
            return bytes / (nanos / 1e9) / (1 << 20);
        }
    }

    private HttpLoad() {
    }

    /** How much of a head's closing CRLF CRLF has been read (0-4) once {@code b} follows {@code matched} bytes of it. */
    static int headEnd(int matched, int b) {
        if (b == '\r') return matched == 0 || matched == 2 ? matched + 1 : 1;
        return b == '\n' && (matched == 1 || matched == 3) ? matched + 1 : 0;
    }

    /** {@code n} GETs one after the other on one connection; each one's milliseconds. */
    static double[] latencies(Endpoint endpoint, int n) throws IOException {
        double[] out = new double[n];
        try (var connection = new Connection(endpoint)) {
            for (int i = 0; i < n; i++) {
                long start = System.nanoTime();
                connection.get();
                out[i] = Format.millis(System.nanoTime() - start);
            }
        }
        return out;
    }

    /** {@code connections} clients GET as fast as they are answered for {@code length}, each on its own connection. */
    static Round round(Endpoint endpoint, int connections, Duration length) throws IOException {
        var requests = new AtomicLong();
        var bytes = new AtomicLong();
        var connects = new AtomicLong();
        var failure = new AtomicReference<IOException>();
        long start = System.nanoTime();
        long end = start + length.toNanos();
        var threads = new ArrayList<Thread>();
        for (int c = 0; c < connections; c++) {
            threads.add(Thread.ofPlatform().name("bench-http-" + c).start(() -> {
                try (var connection = new Connection(endpoint)) {
                    while (System.nanoTime() < end && failure.get() == null) {
                        bytes.addAndGet(connection.get());
                        requests.incrementAndGet();
                    }
                    connects.addAndGet(connection.opened);
                } catch (IOException e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread thread : threads) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while the load ran", e);
            }
        }
        long elapsed = System.nanoTime() - start;
        if (failure.get() != null) throw failure.get();
        return new Round(requests.get(), bytes.get(), elapsed, connects.get());
    }

    /** One client connection; reopened whenever the server ends the previous one. */
    static final class Connection implements AutoCloseable {
        private final Endpoint endpoint;
        private final byte[] request;
        private final byte[] sink = new byte[64 * 1024];
        private Socket socket;
        private InputStream in;
        private OutputStream out;
        /** Connections opened so far. */
        long opened;
        /** Whether the last response let the connection stay open. */
        boolean keptAlive;

        Connection(Endpoint endpoint) {
            this.endpoint = endpoint;
            this.request = ("GET " + endpoint.path() + " HTTP/1.1\r\nHost: " + endpoint.host() + "\r\nUser-Agent: stasis-bench\r\n"
                    + "Accept: */*\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        }

        /** One GET; the body's length. Fails on anything but a 200 with a framed body. */
        long get() throws IOException {
            if (socket == null) open();
            out.write(request);
            out.flush();
            String head = readHead();
            String[] lines = head.split("\r\n");
            String[] status = lines[0].split(" ", 3);
            if (status.length < 2 || !status[1].equals("200"))
                throw new IOException("GET " + endpoint.path() + " via " + endpoint.address() + " answered " + lines[0]);
            long length = -1;
            boolean close = status[0].equals("HTTP/1.0");
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                if (colon <= 0) continue;
                String name = lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT);
                String value = lines[i].substring(colon + 1).strip().toLowerCase(Locale.ROOT);
                switch (name) {
                    case "content-length" -> length = Long.parseLong(value);
                    case "connection" -> close = value.contains("close") || (close && !value.contains("keep-alive"));
                    case "transfer-encoding" -> throw new IOException("chunked responses are not read by this client: " + lines[i]);
                    default -> {
                        // not needed
                    }
                }
            }
            long body = length < 0 ? drain(Long.MAX_VALUE) : drain(length);
            if (length < 0) close = true;
            keptAlive = !close;
            if (close) close();
            return body;
        }

        private void open() throws IOException {
            var s = new Socket();
            try {
                s.setTcpNoDelay(true);
                s.setSoTimeout(READ_TIMEOUT_MS);
                s.connect(endpoint.address(), CONNECT_TIMEOUT_MS);
                in = new BufferedInputStream(s.getInputStream(), 64 * 1024);
                out = s.getOutputStream();
            } catch (IOException e) {
                s.close();
                throw new IOException("cannot connect to " + endpoint.address() + ": " + e.getMessage(), e);
            }
            socket = s;
            opened++;
        }

        private String readHead() throws IOException {
            var head = new ByteArrayOutputStream(512);
            int matched = 0;
            while (matched < 4) {
                int b = in.read();
                if (b < 0) throw new EOFException("the server closed the connection before answering (" + endpoint.address() + ")");
                head.write(b);
                matched = headEnd(matched, b);
                if (head.size() > MAX_HEAD) throw new IOException("response head over " + MAX_HEAD + " bytes");
            }
            return head.toString(StandardCharsets.ISO_8859_1);
        }

        /** Reads and drops {@code length} bytes (or until the end of stream for {@link Long#MAX_VALUE}). */
        private long drain(long length) throws IOException {
            long read = 0;
            while (read < length) {
                int n = in.read(sink, 0, (int) Math.min(sink.length, length - read));
                if (n < 0) {
                    if (length == Long.MAX_VALUE) return read;
                    throw new EOFException("body ended after " + read + " of " + length + " bytes");
                }
                read += n;
            }
            return read;
        }

        @Override
        public void close() throws IOException {
            var s = socket;
            socket = null;
            if (s != null) s.close();
        }
    }
}

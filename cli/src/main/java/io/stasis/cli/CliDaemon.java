package io.stasis.cli;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import jdk.net.ExtendedSocketOptions;

/**
 * The CLI daemon: a JVM that stays warm between CLI calls, so that a command answers in
 * milliseconds instead of paying for the start of a JVM (about half a second on these machines,
 * most of it loading and first running picocli, Jackson and the HTTP client). {@code stasis-client}
 * (src/main/c) sends it one command per connection on a unix socket and relays the command's
 * stdin, stdout, stderr and exit code; the wire protocol is described there.
 *
 * <p>Each command runs as {@link Main#run(String[], CliIo)} does in-process, with the caller's
 * arguments, environment and working directory, on a virtual thread of its own. Commands that need
 * the calling process itself (a terminal, local files, its signals) hand themselves back
 * ({@link CliIo#requireLocal}), and the client runs them in a fresh JVM.
 *
 * <p>It answers only its own user (the socket is 0600 in a 0700 directory, and each caller's
 * credentials are checked), and it ends: after {@link #IDLE} without a call, when asked to (the
 * launcher does after it rebuilt the CLI), or as soon as its jar changed under it, in which case it
 * hands the call back rather than run old code.
 */
final class CliDaemon {
    static final String FLAG = "--cli-daemon";
    /** How long it waits for the next call before it exits ({@code STASIS_CLI_DAEMON_IDLE}, in seconds, overrides). */
    static final Duration IDLE = Duration.ofMinutes(15);
    private static final byte[] MAGIC = "STASIS-CLI 1\n".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_FRAME = 65536;
    private static final int FLAG_STDERR_TTY = 4, FLAG_STOP = 8;

    private final Path socket;
    private final ServerSocketChannel server;
    private final UserPrincipal owner;
    private final Path jar;
    private final FileTime jarTime;
    private final Duration idle;
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicLong lastCall = new AtomicLong(System.nanoTime());
    private volatile boolean stopping;

    private CliDaemon(Path socket, ServerSocketChannel server, Path jar, Duration idle) throws IOException {
        this.socket = socket;
        this.server = server;
        this.owner = Files.getOwner(socket);
        this.jar = jar;
        this.jarTime = jar == null ? null : Files.getLastModifiedTime(jar);
        this.idle = idle;
    }

    /** Serves on {@code socket} until idle, stopped or outdated; the process's exit code. */
    static int serve(Path socket) {
        CliDaemon daemon;
        try {
            daemon = open(socket, codeLocation(), idleFromEnvironment());
        } catch (IOException e) {
            System.err.println("stasis cli daemon: cannot listen on " + socket + ": " + e.getMessage());
            return 1;
        }
        if (daemon == null) return 0; // another daemon answers there
        daemon.run();
        return 0;
    }

    /**
     * A daemon listening on {@code socket}, or null when another one already answers there.
     * {@code jar}: the code it runs, whose change ends it (null: none to watch).
     */
    static CliDaemon open(Path socket, Path jar, Duration idle) throws IOException {
        var server = bind(socket);
        if (server == null) return null;
        try {
            return new CliDaemon(socket, server, jar, idle);
        } catch (IOException e) {
            server.close();
            throw e;
        }
    }

    /** The socket, or null when a live daemon already answers on it (a stale file is replaced). */
    private static ServerSocketChannel bind(Path socket) throws IOException {
        var address = UnixDomainSocketAddress.of(socket);
        if (Files.exists(socket)) {
            try (var probe = SocketChannel.open(address)) {
                return null;
            } catch (IOException stale) {
                Files.deleteIfExists(socket);
            }
        }
        var server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(address);
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
            return server;
        } catch (IOException e) {
            server.close();
            if (Files.exists(socket)) return null; // another daemon bound it first
            throw e;
        }
    }

    private static Path codeLocation() {
        try {
            Path location = Path.of(CliDaemon.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return Files.isRegularFile(location) ? location : null;
        } catch (Exception e) {
            return null; // classes from a directory (tests): nothing to watch
        }
    }

    private static Duration idleFromEnvironment() {
        String seconds = System.getenv("STASIS_CLI_DAEMON_IDLE");
        if (seconds == null || seconds.isBlank()) return IDLE;
        try {
            return Duration.ofSeconds(Math.max(1, Long.parseLong(seconds.strip())));
        } catch (NumberFormatException e) {
            return IDLE;
        }
    }

    /** Serves until idle, stopped or outdated, then removes its socket. */
    void run() {
        Thread.ofPlatform().daemon().name("stasis-cli-daemon-idle").start(this::exitWhenIdle);
        try {
            while (!stopping) {
                SocketChannel connection;
                try {
                    connection = server.accept();
                } catch (IOException closed) {
                    return;
                }
                running.incrementAndGet();
                lastCall.set(System.nanoTime());
                Thread.ofVirtual().name("stasis-cli-call").start(() -> {
                    try (connection) {
                        serve(connection);
                    } catch (IOException | RuntimeException e) {
                        // the caller went away, or sent something else than a request: its problem
                    } finally {
                        lastCall.set(System.nanoTime());
                        running.decrementAndGet();
                    }
                });
            }
        } finally {
            stop();
            try {
                Files.deleteIfExists(socket);
            } catch (IOException ignored) {
                // the next daemon's bind replaces a stale file
            }
        }
    }

    /** Calls under way. */
    int running() {
        return running.get();
    }

    private void exitWhenIdle() {
        while (!stopping) {
            try {
                Thread.sleep(Duration.ofSeconds(1));
            } catch (InterruptedException e) {
                return;
            }
            if (running.get() == 0 && System.nanoTime() - lastCall.get() > idle.toNanos()) stop();
        }
    }

    void stop() {
        stopping = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing is all that is asked
        }
    }

    private boolean outdated() {
        try {
            return jar != null && !Files.getLastModifiedTime(jar).equals(jarTime);
        } catch (IOException e) {
            return true;
        }
    }

    private void serve(SocketChannel connection) throws IOException {
        var peer = connection.getOption(ExtendedSocketOptions.SO_PEERCRED);
        if (!peer.user().equals(owner)) return;
        var in = new DataInputStream(Channels.newInputStream(connection));
        var frames = new Frames(Channels.newOutputStream(connection));
        var request = Request.read(in);
        if ((request.flags & FLAG_STOP) != 0) {
            stop();
            return;
        }
        if (outdated()) { // a new build: this JVM runs old code
            frames.send('L', new byte[0]);
            stop();
            return;
        }
        frames.send('A', new byte[0]);
        var stdin = new RemoteStdin(frames);
        var out = new PrintStream(new BufferedOutputStream(frames.stream('O'), MAX_FRAME), false, StandardCharsets.UTF_8);
        var err = new PrintStream(frames.stream('R'), true, StandardCharsets.UTF_8);
        var io = new CliIo(out, err, stdin, request.env, (request.flags & FLAG_STDERR_TTY) != 0, request.cwd, true);
        Thread command = Thread.currentThread();
        // The caller's frames: stdin, its end, or a signal (then, as its JVM would have ended, the command stops).
        Thread.ofVirtual().name("stasis-cli-input").start(() -> {
            try {
                while (true) {
                    int type = in.read();
                    if (type < 0) break;
                    byte[] data = new byte[checkedLength(in.readInt())];
                    in.readFully(data);
                    switch (type) {
                        case 'I' -> stdin.offer(data);
                        case 'E' -> stdin.offer(null);
                        case 'S' -> command.interrupt();
                        default -> throw new IOException("unknown frame " + type);
                    }
                    if (type == 'S') break;
                }
            } catch (IOException e) {
                // the caller is gone
            }
            stdin.offer(null);
            if (!frames.exited()) command.interrupt();
        });
        int code = Main.run(request.args, io);
        out.flush();
        err.flush();
        frames.finish(code);
    }

    private static int checkedLength(int length) throws IOException {
        if (length < 0 || length > MAX_FRAME) throw new IOException("a frame of " + length + " bytes");
        return length;
    }

    /** The request header of {@code stasis-client}. */
    private record Request(int flags, String[] args, Path cwd, Map<String, String> env) {
        static Request read(DataInputStream in) throws IOException {
            byte[] magic = new byte[MAGIC.length];
            in.readFully(magic);
            if (!Arrays.equals(magic, MAGIC)) throw new IOException("not a stasis-client request");
            int flags = in.readInt();
            String[] args = new String[count(in.readInt())];
            for (int i = 0; i < args.length; i++) args[i] = string(in);
            Path cwd = Path.of(string(in));
            var env = new HashMap<String, String>();
            int envc = count(in.readInt());
            for (int i = 0; i < envc; i++) {
                String entry = string(in);
                int eq = entry.indexOf('=');
                if (eq > 0) env.put(entry.substring(0, eq), entry.substring(eq + 1));
            }
            return new Request(flags, args, cwd, Map.copyOf(env));
        }

        private static int count(int n) throws IOException {
            if (n < 0 || n > 100_000) throw new IOException("a count of " + n);
            return n;
        }

        private static String string(DataInputStream in) throws IOException {
            int length = in.readInt();
            if (length < 0 || length > 1 << 20) throw new IOException("a string of " + length + " bytes");
            byte[] bytes = new byte[length];
            in.readFully(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    /** Frames to the caller, written whole by whichever thread sends one. */
    private static final class Frames {
        private final OutputStream out;
        private boolean exited;

        Frames(OutputStream out) {
            this.out = out;
        }

        synchronized void send(char type, byte[] data) throws IOException {
            send(type, data, 0, data.length);
        }

        synchronized void send(char type, byte[] data, int offset, int length) throws IOException {
            var head = ByteBuffer.allocate(5).put((byte) type).putInt(length);
            out.write(head.array());
            out.write(data, offset, length);
            out.flush();
        }

        /** The last frame: the exit code, or 'L' ({@link Main#RUN_LOCALLY}). */
        synchronized void finish(int code) throws IOException {
            exited = true;
            if (code == Main.RUN_LOCALLY) {
                send('L', new byte[0]);
            } else {
                send('X', ByteBuffer.allocate(4).putInt(code).array());
            }
        }

        synchronized boolean exited() {
            return exited;
        }

        /** An output stream of frames of one type, at most {@link #MAX_FRAME} bytes each. */
        OutputStream stream(char type) {
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    while (len > 0) {
                        int n = Math.min(len, MAX_FRAME);
                        send(type, b, off, n);
                        off += n;
                        len -= n;
                    }
                }
            };
        }
    }

    /** The caller's stdin: asked for when the command reads it, so none is read that is not used. */
    private static final class RemoteStdin extends InputStream {
        private final Frames frames;
        private final SynchronousQueue<byte[]> chunks = new SynchronousQueue<>();
        private static final byte[] END = new byte[0];
        private byte[] chunk = new byte[0];
        private int at;
        private boolean ended;

        RemoteStdin(Frames frames) {
            this.frames = frames;
        }

        /** Hands over a chunk the caller sent; null: the end. */
        void offer(byte[] data) {
            try {
                if (data == null) {
                    chunks.offer(END, 1, TimeUnit.SECONDS); // taken only by a read under way
                } else {
                    chunks.put(data);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public synchronized int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) return 0;
            while (at == chunk.length) {
                if (ended) return -1;
                frames.send('W', ByteBuffer.allocate(4).putInt(Math.min(len, MAX_FRAME)).array());
                try {
                    byte[] next = chunks.take();
                    if (next == END) {
                        ended = true;
                    } else {
                        chunk = next;
                        at = 0;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while reading stdin");
                }
            }
            int n = Math.min(len, chunk.length - at);
            System.arraycopy(chunk, at, b, off, n);
            at += n;
            return n;
        }
    }
}

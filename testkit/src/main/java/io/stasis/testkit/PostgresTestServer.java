package io.stasis.testkit;

import io.stasis.host.FileTrees;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A real PostgreSQL server from Debian's packages, run for a test: its own cluster in a fresh
 * {@code /tmp/stasis-pg-*} directory, on 127.0.0.1 and a port the kernel picks, password
 * authentication (scram-sha-256) for the role {@code stasis} with a random password. PostgreSQL
 * refuses to run as root, so the cluster belongs to the {@code postgres} user the package creates.
 * The only class that starts it; {@link #close()} stops it (fast shutdown, killing it if it lingers)
 * and removes the directory.
 *
 * <p>Durability is off ({@code fsync}, {@code synchronous_commit}): a test's cluster dies with the
 * test, and creating a database per test stays fast.
 */
public final class PostgresTestServer implements AutoCloseable {
    public static final String USER = "stasis";
    private static final String SYSTEM_USER = "postgres";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private final Path dir;
    private final Process process;
    private final int port;
    private final String password;

    private PostgresTestServer(Path dir, Process process, int port, String password) {
        this.dir = dir;
        this.process = process;
        this.port = port;
        this.password = password;
    }

    /** The newest installed server's binaries ({@code /usr/lib/postgresql/<major>/bin}). */
    public static Optional<Path> binaries() {
        try (Stream<Path> majors = Files.list(Path.of("/usr/lib/postgresql"))) {
            return majors.map(major -> major.resolve("bin"))
                    .filter(bin -> Files.isExecutable(bin.resolve("postgres")) && Files.isExecutable(bin.resolve("initdb")))
                    .max(Comparator.comparingInt(bin -> Integer.parseInt(bin.getParent().getFileName().toString().replaceAll("\\D", "0"))));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    public static boolean installed() {
        return binaries().isPresent() && Files.isExecutable(Path.of("/usr/bin/setpriv"));
    }

    /** Initialises a cluster and starts its server; returns once it accepts connections. */
    public static PostgresTestServer start() throws IOException, InterruptedException {
        Path bin = binaries().orElseThrow(() -> new IllegalStateException("PostgreSQL is not installed (apt-get install postgresql)"));
        Path dir = Files.createTempDirectory("stasis-pg-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        try {
            String password = HexFormat.of().formatHex(new SecureRandom().generateSeed(12));
            Path data = dir.resolve("data");
            Path passwordFile = dir.resolve("password");
            Files.writeString(passwordFile, password + "\n");
            giveToSystemUser(dir, passwordFile);
            run(List.of(bin.resolve("initdb").toString(), "--pgdata=" + data, "--username=" + USER, "--pwfile=" + passwordFile,
                    "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"), dir.resolve("initdb.log"));
            Files.delete(passwordFile);
            int port;
            try (var probe = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
                port = probe.getLocalPort();
            }
            Path log = dir.resolve("postgres.log");
            var builder = new ProcessBuilder(asSystemUser(List.of(bin.resolve("postgres").toString(), "-D", data.toString(),
                    "-h", "127.0.0.1", "-p", String.valueOf(port), "-k", data.toString(),
                    "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300")))
                    .redirectErrorStream(true).redirectOutput(log.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
            var server = new PostgresTestServer(dir, ToolRunner.start(builder), port, password);
            try {
                server.awaitReady(log);
                return server;
            } catch (RuntimeException | InterruptedException e) {
                server.close();
                throw e;
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (Files.exists(dir)) FileTrees.deleteRecursively(dir);
            throw e;
        }
    }

    /** The cluster's directory belongs to the system user; the password file is readable by it alone. */
    private static void giveToSystemUser(Path dir, Path passwordFile) throws IOException {
        UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
        Files.setOwner(dir, users.lookupPrincipalByName(SYSTEM_USER));
        Files.setOwner(passwordFile, users.lookupPrincipalByName(SYSTEM_USER));
        Files.setPosixFilePermissions(passwordFile, PosixFilePermissions.fromString("rw-------"));
    }

    /** {@code command} run as the system user: setpriv execs in place, so the process is the command itself. */
    private static List<String> asSystemUser(List<String> command) {
        var full = new java.util.ArrayList<>(List.of("/usr/bin/setpriv", "--reuid=" + SYSTEM_USER, "--regid=" + SYSTEM_USER, "--init-groups",
                "--reset-env"));
        full.addAll(command);
        return full;
    }

    private static void run(List<String> command, Path log) throws IOException, InterruptedException {
        var process = ToolRunner.start(new ProcessBuilder(asSystemUser(command)).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())));
        if (!process.waitFor(2, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException(command.getFirst() + " did not finish in 2 minutes: " + Files.readString(log));
        }
        if (process.exitValue() != 0)
            throw new IllegalStateException(Path.of(command.getFirst()).getFileName() + " exited " + process.exitValue() + ": " + Files.readString(log));
    }

    private void awaitReady(Path log) throws InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            if (!process.isAlive()) throw new IllegalStateException("postgres exited " + process.exitValue() + ": " + readQuietly(log));
            try (var c = connect("postgres")) {
                return;
            } catch (SQLException notYet) {
                // starting up
            }
            if (System.nanoTime() > deadline)
                throw new IllegalStateException("postgres did not accept connections within " + START_TIMEOUT + ": " + readQuietly(log));
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
    }

    private static String readQuietly(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    public int port() {
        return port;
    }

    public String password() {
        return password;
    }

    /** A JDBC connection to {@code database} as {@link #USER}. */
    public Connection connect(String database) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/" + database, USER, password);
    }

    /** Creates an empty database and returns its catalog URL, password included. */
    public String newDatabase() {
        String name = "stasis_" + DATABASES.incrementAndGet();
        try (var c = connect("postgres"); var st = c.createStatement()) {
            st.executeUpdate("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return url(name);
    }

    /** {@code postgresql://stasis:PASSWORD@127.0.0.1:PORT/DATABASE}. */
    public String url(String database) {
        return "postgresql://" + USER + ":" + password + "@127.0.0.1:" + port + "/" + database;
    }

    /** Ends every session of {@code database} but the caller's, as a lost network would (the server stays up). */
    public void dropConnections(String database) {
        try (var c = connect("postgres");
             var st = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()")) {
            st.setString(1, database);
            st.executeQuery().close();
        } catch (SQLException e) {
            throw new IllegalStateException("cannot end the sessions of " + database + ": " + e.getMessage(), e);
        }
    }

    /** Fast shutdown (SIGINT: sessions are ended), SIGKILL after 10 s; then the cluster's directory goes. */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                ToolRunner.start(new ProcessBuilder("kill", "-INT", String.valueOf(process.pid()))).waitFor(10, TimeUnit.SECONDS);
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try {
            FileTrees.deleteRecursively(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the PostgreSQL cluster in " + dir, e);
        }
    }
}

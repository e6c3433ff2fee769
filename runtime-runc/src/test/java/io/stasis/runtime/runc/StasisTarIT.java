package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * stasis-tar, run as CRIU runs {@code tar} (the same arguments, the tree on standard input, the
 * archive on standard output, and back): what it writes any tar reads, it extracts as GNU tar does,
 * and it hands the real tar what it does not do itself. Root: device nodes and other owners.
 */
@Tag("root")
class StasisTarIT {
    private static final List<String> CREATE = List.of("--create", "--gzip", "--no-unquote", "--no-wildcards", "--one-file-system",
            "--check-links", "--preserve-permissions", "--sparse", "--numeric-owner", "--directory", "/proc/self/fd/0", ".");
    private static final List<String> EXTRACT = List.of("--extract", "--gzip", "--no-unquote", "--no-wildcards", "--directory");
    /** A PATH with the real tar after ours, and one with ours alone. */
    private static final String SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";

    @TempDir
    Path dir;
    Path ours;
    Path tree;

    @BeforeEach
    void install() throws IOException {
        ours = HelperBinary.installTarForCriu(dir.resolve("bin"));
        tree = Files.createDirectory(dir.resolve("tree"));
    }

    @Test
    void whatItWritesAnyTarReadsAndItExtractsAsTarDoes() throws Exception {
        fill(tree);
        Path archive = create(ours + ":" + SYSTEM_PATH);
        assertThat(Files.readAllBytes(archive)).as("marked as ours").startsWith(0x1f, 0x8b, 8, 0x10);

        Path byRealTar = extract("tar", archive, SYSTEM_PATH);
        Path byOurs = extract(ours.resolve("tar").toString(), archive, ours.toString()); // no other tar to fall back on

        assertThat(listing(byOurs)).isEqualTo(listing(byRealTar)).isEqualTo(listing(tree));
        assertThat(Files.getAttribute(byOurs.resolve("a/big"), "unix:ino")).as("hard link")
                .isEqualTo(Files.getAttribute(byOurs.resolve("a/b/hard"), "unix:ino"));
    }

    @Test
    void anArchiveTheRealTarWroteGoesToTheRealTar() throws Exception {
        fill(tree);
        Path archive = create(SYSTEM_PATH);
        assertThat(Files.readAllBytes(archive)).as("not ours").startsWith(0x1f, 0x8b, 8, 0);

        assertThat(listing(extract(ours.resolve("tar").toString(), archive, ours + ":" + SYSTEM_PATH))).isEqualTo(listing(tree));
        var alone = run(List.of(ours.resolve("tar").toString()), EXTRACT, Files.createDirectory(dir.resolve("alone")), archive, null,
                ours.toString());
        assertThat(alone.code()).isEqualTo(127);
        assertThat(alone.stderr()).contains("no other tar on PATH");
    }

    @Test
    void aSparseFileIsLeftToTheRealTarWhichKeepsItSparse() throws Exception {
        Files.writeString(tree.resolve("small"), "x");
        try (var file = new java.io.RandomAccessFile(tree.resolve("sparse").toFile(), "rw")) {
            file.setLength(64L << 20);
        }
        Path archive = create(ours + ":" + SYSTEM_PATH);
        assertThat(Files.readAllBytes(archive)).as("the real tar's").startsWith(0x1f, 0x8b, 8, 0);
        Path back = extract(ours.resolve("tar").toString(), archive, ours + ":" + SYSTEM_PATH);
        assertThat(Files.size(back.resolve("sparse"))).isEqualTo(64L << 20);
        assertThat(allocatedBytes(back.resolve("sparse"))).as("still sparse").isLessThan(1L << 20);
    }

    @Test
    void aDamagedArchiveIsRefusedNotHalfTrusted() throws Exception {
        Files.write(tree.resolve("data"), new byte[100_000]);
        Path archive = create(ours + ":" + SYSTEM_PATH);
        byte[] bytes = Files.readAllBytes(archive);
        bytes[bytes.length / 2] ^= 1;
        Files.write(archive, bytes);
        var result = run(List.of(ours.resolve("tar").toString()), EXTRACT, Files.createDirectory(dir.resolve("back")), archive, null,
                ours.toString());
        assertThat(result.code()).isNotZero();
        assertThat(result.stderr()).contains("damaged");
    }

    @Test
    void aSymbolicLinkInTheTargetIsNeverFollowed() throws Exception {
        Files.createDirectory(tree.resolve("a"));
        Files.writeString(tree.resolve("a/file"), "inside\n");
        Path archive = create(ours + ":" + SYSTEM_PATH);
        Path outside = Files.createDirectory(dir.resolve("outside"));
        Path target = Files.createDirectory(dir.resolve("target"));
        Files.createSymbolicLink(target.resolve("a"), outside);
        var result = run(List.of(ours.resolve("tar").toString()), EXTRACT, target, archive, null, ours.toString());
        assertThat(result.code()).isNotZero();
        assertThat(result.stderr()).contains("cannot extract ./a/");
        assertThat(outside).isEmptyDirectory();
    }

    @Test
    void otherArgumentsGoToTheRealTar() throws Exception {
        var result = run(List.of(ours.resolve("tar").toString(), "--version"), List.of(), null, null, null, ours + ":" + SYSTEM_PATH);
        assertThat(result.code()).isZero();
        assertThat(result.stdout()).contains("GNU tar");
    }

    /** What a sandbox's /dev or /dev/shm may hold, and more: every kind of entry, odd modes and owners, long names, several stored blocks. */
    private static void fill(Path tree) throws Exception {
        Path a = Files.createDirectories(tree.resolve("a/b"));
        Files.writeString(tree.resolve("setuid"), "#!/bin/sh\n");
        sh("chown 1234:5678 '%s' && chmod 4750 '%s'".formatted(tree.resolve("setuid"), tree.resolve("setuid")));
        byte[] big = new byte[200_000];
        new Random(7).nextBytes(big);
        Files.write(tree.resolve("a/big"), big);
        Files.createLink(tree.resolve("a/b/hard"), tree.resolve("a/big"));
        Files.createSymbolicLink(tree.resolve("a/link"), Path.of("../setuid"));
        Files.createSymbolicLink(tree.resolve("a/long-link"), Path.of("t".repeat(300)));
        Files.writeString(tree.resolve("a/" + "n".repeat(150)), "a long name\n");
        Files.createFile(tree.resolve("empty"));
        sh("mkfifo '%s' && mknod '%s' c 1 3 && chmod 1777 '%s' && chmod 0511 '%s' && touch -h -d '2020-01-02 03:04:05' '%s' '%s' '%s'"
                .formatted(tree.resolve("a/fifo"), tree.resolve("a/null"), a, tree.resolve("a/big"), tree.resolve("a/link"),
                        tree.resolve("a/fifo"), tree.resolve("a")));
        try (var socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) { // tar leaves sockets out; so does ours
            socket.bind(UnixDomainSocketAddress.of(tree.resolve("socket")));
        }
    }

    private Path create(String path) throws Exception {
        Path archive = dir.resolve("archive-" + System.nanoTime() + ".tgz");
        var result = run(List.of("tar"), CREATE, null, tree, archive, path);
        assertThat(result.code()).as(result.stderr()).isZero();
        return archive;
    }

    private Path extract(String tar, Path archive, String path) throws Exception {
        Path target = Files.createDirectory(dir.resolve("back-" + System.nanoTime()));
        var result = run(List.of(tar), EXTRACT, target, archive, null, path);
        assertThat(result.code()).as(result.stderr()).isZero();
        return target;
    }

    private record Result(int code, String stdout, String stderr) {
    }

    /** Runs {@code command args [directory]} with {@code stdin} (a file or a directory) and {@code stdout} redirected, on {@code path}. */
    private Result run(List<String> command, List<String> args, Path directory, Path stdin, Path stdout, String path) throws Exception {
        var argv = new ArrayList<>(List.of("/bin/sh", "-c",
                "exec \"$@\"" + (stdin != null ? " < \"$STDIN\"" : "") + (stdout != null ? " > \"$STDOUT\"" : ""), "sh"));
        argv.addAll(command);
        argv.addAll(args);
        if (directory != null) argv.add(directory.toString());
        var builder = new ProcessBuilder(argv);
        builder.environment().put("PATH", path);
        if (stdin != null) builder.environment().put("STDIN", stdin.toString());
        if (stdout != null) builder.environment().put("STDOUT", stdout.toString());
        var process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(process.waitFor(), out, err);
    }

    private static void sh(String script) throws Exception {
        var process = new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as(script + ": " + out).isZero();
    }

    private static long allocatedBytes(Path file) throws Exception {
        var process = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).start();
        String[] fields = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim().split(" ");
        process.waitFor();
        return Long.parseLong(fields[0]) * Long.parseLong(fields[1]);
    }

    /**
     * Every entry below {@code root} but sockets (tar leaves them out): kind, mode, owner, modification time (whole seconds, as
     * tar keeps it), links, device, size, target, content.
     */
    private static List<String> listing(Path root) throws Exception {
        try (Stream<Path> walk = Files.walk(root)) {
            var lines = new ArrayList<String>();
            for (Path p : walk.sorted().toList()) {
                Map<String, Object> unix = Files.readAttributes(p, "unix:mode,uid,gid,nlink,rdev,lastModifiedTime,size", LinkOption.NOFOLLOW_LINKS);
                if (((int) unix.get("mode") & 0170000) == 0140000) continue;
                String name = root.relativize(p).toString();
                String kind = Files.isSymbolicLink(p) ? "link " + Files.readSymbolicLink(p)
                        : Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "dir"
                        : Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? "file " + unix.get("size") + " " + sha(p) : "node " + unix.get("rdev");
                long seconds = ((FileTime) unix.get("lastModifiedTime")).toMillis() / 1000;
                String links = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "" : " nlink " + unix.get("nlink");
                lines.add("%s %s mode %o owner %s:%s mtime %d%s".formatted(name.isEmpty() ? "." : name, kind, (int) unix.get("mode"),
                        unix.get("uid"), unix.get("gid"), seconds, links));
            }
            return lines;
        }
    }

    private static String sha(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file))).substring(0, 16);
    }
}

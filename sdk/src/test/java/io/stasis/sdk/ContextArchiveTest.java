package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A directory as a build context: the tar.gz {@link ContextArchive} writes, read back by a test reader and by real tars. */
class ContextArchiveTest {
    private static final long MTIME = Instant.parse("2026-11-29T10:00:00Z").getEpochSecond();
    /** 60 + 1 + 60 + 9 bytes: longer than ustar's name field, short enough for its prefix and name. */
    private static final String SPLIT_PATH = "d".repeat(60) + "/" + "e".repeat(60) + "/file.txt";
    /** One name of 204 bytes: no slash to split at, so only a pax header holds it. */
    private static final String LONG_NAME = "n".repeat(200) + ".txt";
    private static final String LONG_TARGET = "/opt/" + "t".repeat(120);

    @TempDir
    Path context;

    @BeforeEach
    void makeContext() throws IOException {
        file("app.py", "print('hi')\n", "rw-r-----");
        file("run.sh", "#!/bin/sh\necho run\n", "rwxr-xr-x");
        file("sub/nested.txt", "nested\n", "rw-r--r--");
        Files.createDirectories(context.resolve("sub/empty"));
        Files.setPosixFilePermissions(context.resolve("sub/empty"), PosixFilePermissions.fromString("rwx------"));
        Files.setPosixFilePermissions(context.resolve("sub"), PosixFilePermissions.fromString("rwxr-x---"));
        file("café.txt", "accent\n", "rw-r--r--");
        file(SPLIT_PATH, "split\n", "rw-r--r--");
        file(LONG_NAME, "long\n", "rw-r--r--");
        Files.createSymbolicLink(context.resolve("link"), Path.of("app.py"));
        Files.createSymbolicLink(context.resolve("far-link"), Path.of(LONG_TARGET));
        for (Path dir : List.of(context.resolve("sub/empty"), context.resolve("sub"), context.resolve("d".repeat(60) + "/" + "e".repeat(60)),
                context.resolve("d".repeat(60)))) {
            Files.setLastModifiedTime(dir, FileTime.from(Instant.ofEpochSecond(MTIME)));
        }
    }

    private void file(String name, String content, String permissions) throws IOException {
        Path path = context.resolve(name);
        Files.createDirectories(path.getParent());
        Files.writeString(path, content);
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        Files.setLastModifiedTime(path, FileTime.from(Instant.ofEpochSecond(MTIME)));
    }

    private Map<String, TarEntries.Entry> entries() {
        return TarEntries.read(ContextArchive.of(context, TemplateBuildRequest.MAX_CONTEXT_BYTES)).stream()
                .collect(Collectors.toMap(TarEntries.Entry::name, Function.identity()));
    }

    @Test
    void entriesKeepNamesModesTimesAndLinksOwnedByRoot() {
        var entries = entries();
        assertThat(entries.get("./app.py")).satisfies(e -> {
            assertThat(e.type()).isEqualTo('0');
            assertThat(e.mode()).isEqualTo(0640);
            assertThat(e.text()).isEqualTo("print('hi')\n");
            assertThat(e.mtime()).isEqualTo(MTIME);
            assertThat(e.uid()).isZero();
            assertThat(e.gid()).isZero();
        });
        assertThat(entries.get("./run.sh").mode()).isEqualTo(0755);
        assertThat(entries.get("./sub/")).satisfies(e -> {
            assertThat(e.type()).isEqualTo('5');
            assertThat(e.mode()).isEqualTo(0750);
            assertThat(e.mtime()).isEqualTo(MTIME);
        });
        assertThat(entries.get("./sub/empty/").mode()).isEqualTo(0700);
        assertThat(entries.get("./sub/nested.txt").text()).isEqualTo("nested\n");
        assertThat(entries.get("./café.txt").text()).isEqualTo("accent\n");
        assertThat(entries.get("./link")).satisfies(e -> {
            assertThat(e.type()).isEqualTo('2');
            assertThat(e.linkName()).isEqualTo("app.py");
            assertThat(e.content()).isEmpty();
        });
        assertThat(entries.get("./" + SPLIT_PATH).text()).as("ustar prefix + name").isEqualTo("split\n");
        assertThat(entries.get("./" + LONG_NAME).text()).as("pax path").isEqualTo("long\n");
        assertThat(entries.get("./far-link").linkName()).as("pax linkpath").isEqualTo(LONG_TARGET);
    }

    @Test
    void theRootComesFirstAs0755AndEntriesAreSortedDepthFirst() {
        List<String> names = TarEntries.read(ContextArchive.of(context, TemplateBuildRequest.MAX_CONTEXT_BYTES)).stream()
                .map(TarEntries.Entry::name).toList();
        assertThat(names).containsExactly("./", "./app.py", "./café.txt", "./" + "d".repeat(60) + "/",
                "./" + "d".repeat(60) + "/" + "e".repeat(60) + "/", "./" + SPLIT_PATH, "./far-link", "./link", "./" + LONG_NAME,
                "./run.sh", "./sub/", "./sub/empty/", "./sub/nested.txt");
        assertThat(TarEntries.read(ContextArchive.of(context, TemplateBuildRequest.MAX_CONTEXT_BYTES)).getFirst().mode()).isEqualTo(0755);
    }

    @Test
    void theSameTreeGivesTheSameBytes() {
        // The server keys cached COPY steps by the archive's digest.
        assertThat(ContextArchive.of(context, TemplateBuildRequest.MAX_CONTEXT_BYTES))
                .isEqualTo(ContextArchive.of(context, TemplateBuildRequest.MAX_CONTEXT_BYTES));
    }

    @Test
    void socketsAreLeftOut() throws IOException {
        try (var socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            socket.bind(UnixDomainSocketAddress.of(context.resolve("agent.sock")));
            assertThat(entries()).doesNotContainKey("./agent.sock").containsKey("./app.py");
        }
    }

    @Test
    void anArchiveOverTheLimitNamesTheEntryItReached() throws IOException {
        byte[] noise = new byte[2 << 20];
        new Random(7).nextBytes(noise); // incompressible
        Files.write(context.resolve("sub/weights.bin"), noise);
        assertThatThrownBy(() -> ContextArchive.of(context, 1 << 20))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("larger than 1 MiB once compressed")
                .hasMessageContaining("./sub/weights.bin");
    }

    @Test
    void aContextMustBeADirectory() {
        assertThatThrownBy(() -> ContextArchive.of(context.resolve("app.py"), 1 << 20))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be a directory").hasMessageContaining("is not one");
        assertThatThrownBy(() -> ContextArchive.of(context.resolve("missing"), 1 << 20))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not exist");
    }

    @Test
    void paxRecordsCountTheirOwnLength() {
        assertThat(TarWriter.paxRecord("path", "a")).isEqualTo("9 path=a\n");
        // " path=" + 90 + "\n" is 97 bytes, and 2 digits make 99; one more byte makes 100, which has 3 digits.
        assertThat(TarWriter.paxRecord("path", "x".repeat(90))).startsWith("99 ");
        assertThat(TarWriter.paxRecord("path", "x".repeat(91))).startsWith("101 ");
        assertThat(TarWriter.paxRecord("path", "é")).as("bytes, not characters").isEqualTo("11 path=é\n");
    }

    /** GNU tar and busybox tar (what a build's sandbox unpacks the context with) give back the same tree. */
    @ParameterizedTest
    @ValueSource(strings = {"tar", "busybox tar"})
    void realTarsUnpackTheSameTree(String tar, @TempDir Path out) throws Exception {
        List<String> argv = List.of((tar + " -x -z -f - -C " + out).split(" "));
        assumeTrue(Files.isExecutable(Path.of("/usr/bin", argv.getFirst())) || Files.isExecutable(Path.of("/bin", argv.getFirst())),
                argv.getFirst() + " is not installed");
        var process = new ProcessBuilder(argv).redirectErrorStream(true).start();
        try {
            try (var stdin = process.getOutputStream()) {
                stdin.write(ContextArchive.of(context, TemplateBuildRequest.MAX_CONTEXT_BYTES));
            }
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(tar + " ends").isTrue();
            String messages = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.exitValue()).as(tar + ": " + messages).isZero();
        } finally {
            process.destroyForcibly();
        }
        for (String name : List.of("app.py", "run.sh", "sub/nested.txt", "café.txt", SPLIT_PATH, LONG_NAME)) {
            assertThat(Files.readString(out.resolve(name))).as(name).isEqualTo(Files.readString(context.resolve(name)));
            assertThat(Files.getPosixFilePermissions(out.resolve(name))).as(name).isEqualTo(Files.getPosixFilePermissions(context.resolve(name)));
        }
        assertThat(Files.getPosixFilePermissions(out.resolve("sub"))).isEqualTo(PosixFilePermissions.fromString("rwxr-x---"));
        assertThat(Files.isDirectory(out.resolve("sub/empty"))).isTrue();
        assertThat(Files.readSymbolicLink(out.resolve("link"))).isEqualTo(Path.of("app.py"));
        assertThat(Files.readSymbolicLink(out.resolve("far-link"))).isEqualTo(Path.of(LONG_TARGET));
        assertThat(Files.getLastModifiedTime(out.resolve("app.py"), LinkOption.NOFOLLOW_LINKS).toInstant().getEpochSecond()).isEqualTo(MTIME);
    }
}

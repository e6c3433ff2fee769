package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxLayout.CANARY;
import static io.stasis.fs.linux.SandboxLayout.OUTSIDE_ONLY;
import static io.stasis.fs.linux.SandboxLayout.OWNER;
import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileContent;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.SandboxPath;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.OptionalInt;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeTry;

/**
 * Random paths built from the trap names of {@link SandboxLayout#plantTraps()}, {@code ..},
 * deep climbs and the outside directory's own host path, thrown at every operation: no result
 * may carry the canary or an outside name, and the outside tree must stay exactly as it was.
 */
@Tag("root")
class EscapeFuzzIT {
    private static Path base;
    private static SandboxLayout layout;
    private static Map<String, String> outsideBefore;
    private static ServerSocketChannel outsideSocket;
    private static final LinuxSandboxFiles files = new LinuxSandboxFiles(OWNER);

    enum Op { READ, READ_AT, SIZE_OF, LIST, STAT, WRITE, WRITE_FILE, MKDIR, MOVE_FROM, MOVE_TO, DELETE, DELETE_TREE, DELETE_RECURSIVELY, PIN }

    @BeforeContainer
    static void createLayout() throws IOException {
        base = Files.createTempDirectory("stasis-fuzz-");
        layout = new SandboxLayout(base);
        outsideSocket = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        outsideSocket.bind(UnixDomainSocketAddress.of(layout.outside.resolve("sock")));
        outsideBefore = layout.snapshotOutside();
    }

    @AfterContainer
    static void removeLayout() throws IOException {
        outsideSocket.close();
        layout.clearRoot();
        Files.delete(layout.root);
        try (var all = Files.walk(layout.outside)) { // deepest first; walk never follows links
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
        Files.delete(base);
    }

    @BeforeTry
    void plantFreshTraps() throws IOException {
        layout.clearRoot();
        layout.plantTraps();
    }

    @Provide
    Arbitrary<String> hostilePaths() {
        Arbitrary<String> component = Arbitraries.of(
                "..", "..", "..", ".", "", "d", "a", "b", "chain", "out-abs", "out-rel", "deep", "l2", "up",
                "outside", "canary", OUTSIDE_ONLY, "m", "proc", "self", "root", "etc-abs", "canary-abs", "canary-rel",
                "sock-abs", "sock", "loop1", "OUTSIDE", "../../../../../../../..", "d/up", "a/b/chain");
        return Combinators.combine(component.list().ofMinSize(1).ofMaxSize(10), Arbitraries.of("/", ""))
                .as((parts, lead) -> lead + String.join("/", parts))
                .filter(p -> !p.isEmpty());
    }

    @Property(tries = 1000)
    void nothingOutsideIsEverReachedOrChanged(@ForAll("hostilePaths") String raw, @ForAll Op op) throws IOException {
        String p = raw.replace("OUTSIDE", layout.outsideFromSlash());
        try (ConfinedRoot confined = ConfinedRoot.open(layout.root, OWNER)) {
            apply(op, p, confined);
        } catch (StasisException | LinuxException expected) {
            // a message may echo the caller's own path, which can spell the host root by chance
            // ("OUTSIDE/../root"); anything else naming it would be a leak
            String message = withoutCallersPath(expected.getMessage(), p);
            assertThat(message).doesNotContain(CANARY).doesNotContain(layout.root.toString());
        }
        assertThat(layout.snapshotOutside()).as(op + " " + p).isEqualTo(outsideBefore);
    }

    private static void apply(Op op, String p, ConfinedRoot confined) throws IOException {
        Path root = layout.root;
        switch (op) {
            case READ -> {
                try (FileContent c = files.read(root, path(p))) {
                    assertThat(new String(c.stream().readAllBytes(), StandardCharsets.UTF_8)).as(p).doesNotContain(CANARY);
                }
            }
            case READ_AT -> assertThat(new String(confined.readAt(p, 0, 1000), StandardCharsets.UTF_8)).as(p).doesNotContain(CANARY);
            case SIZE_OF -> assertThat(confined.sizeOf(p)).as(p).isNotEqualTo(CANARY.length());
            case LIST -> assertThat(files.list(root, path(p))).extracting(FileInfo::name).as(p).doesNotContain(OUTSIDE_ONLY, "deeper");
            case STAT -> files.stat(root, path(p));
            case WRITE -> files.write(root, path(p), new ByteArrayInputStream("FUZZ".getBytes(StandardCharsets.UTF_8)), OptionalInt.empty(), 100);
            case WRITE_FILE -> ConfinedCalls.write(confined, p, "FUZZ".getBytes(StandardCharsets.UTF_8), 0600);
            case MKDIR -> files.mkdir(root, path(p), OptionalInt.empty());
            case MOVE_FROM -> files.move(root, path(p), path("/stolen"), true);
            case MOVE_TO -> files.move(root, path("/d/f"), path(p), true);
            case DELETE -> files.delete(root, path(p), false);
            case DELETE_TREE -> files.delete(root, path(p), true);
            case DELETE_RECURSIVELY -> confined.delete(p, true);
            case PIN -> {
                try (PinnedFile pinned = confined.pinSocket(p)) {
                    Stat outside = Syscalls.statx(Syscalls.AT_FDCWD, layout.outside.resolve("sock").toString(), 0);
                    assertThat(pinned.stat().sameInode(outside)).as(p).isFalse();
                }
            }
        }
        Path stolen = root.resolve("stolen");
        if (op == Op.MOVE_FROM && Files.isRegularFile(stolen, LinkOption.NOFOLLOW_LINKS))
            assertThat(Files.readString(stolen)).as(p).doesNotContain(CANARY);
    }

    private static String withoutCallersPath(String message, String p) {
        SandboxPath caller = path(p);
        return message.replace(caller.normalized(), "<path>")
                .replace(SandboxComponents.display(caller.components()), "<path>");
    }

    private static SandboxPath path(String p) {
        return new SandboxPath(p);
    }
}

package io.stasis.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The architecture, held by the build (docs/ARCHITECTURE.md): dependencies point inwards, to core;
 * an adapter uses no other adapter; clients (sdk, mcp, cli, examples) reach neither core nor the
 * server; core does no I/O and starts no process. Read from every module's main sources: a use is
 * any {@code io.stasis} name, imported or written out in full.
 */
class ModuleRulesTest {
    private enum Role {
        /** The domain and its SPIs. */
        CORE,
        /** Shared mechanisms (tools, syscalls, confined file access, HTTP/1.1 framing) that adapters and the server build on. */
        LEAF,
        /** One technology behind core's SPIs. */
        ADAPTER,
        /** Test support: fakes, contract suites, host checks. */
        TESTKIT,
        /** The only place that wires adapters to core, and serves the API. */
        SERVER,
        /** Users' side: the API through HTTP only (E2B: the E2B protocol translated onto it). */
        SDK, MCP, E2B, CLI, EXAMPLES,
        /** Measures a whole private service: may use anything. */
        BENCH
    }

    private static final Map<String, Role> MODULES = Map.ofEntries(
            Map.entry("core", Role.CORE),
            Map.entry("host", Role.LEAF), Map.entry("fs-linux", Role.LEAF), Map.entry("http1", Role.LEAF), Map.entry("json", Role.LEAF),
            Map.entry("storage-btrfs", Role.ADAPTER), Map.entry("runtime-runc", Role.ADAPTER),
            Map.entry("network-linux", Role.ADAPTER), Map.entry("catalog-sql", Role.ADAPTER),
            Map.entry("blob-local", Role.ADAPTER), Map.entry("audit-jsonl", Role.ADAPTER), Map.entry("blob-s3", Role.ADAPTER), Map.entry("blob-content", Role.ADAPTER),
            Map.entry("mounts-fuse", Role.ADAPTER), Map.entry("templates", Role.ADAPTER),
            Map.entry("testkit", Role.TESTKIT),
            Map.entry("server", Role.SERVER),
            Map.entry("sdk", Role.SDK), Map.entry("mcp", Role.MCP), Map.entry("e2b", Role.E2B), Map.entry("cli", Role.CLI), Map.entry("examples", Role.EXAMPLES),
            Map.entry("bench", Role.BENCH));

    /** Whom each role may use, besides itself. */
    private static final Map<Role, Set<Role>> MAY_USE = Map.ofEntries(
            Map.entry(Role.CORE, Set.of()),
            Map.entry(Role.LEAF, Set.of(Role.CORE)),
            Map.entry(Role.ADAPTER, Set.of(Role.CORE, Role.LEAF)),
            Map.entry(Role.TESTKIT, Set.of(Role.CORE, Role.LEAF)),
            // The MCP and E2B endpoints it serves drive the API through their modules and so the SDK.
            Map.entry(Role.SERVER, Set.of(Role.CORE, Role.LEAF, Role.ADAPTER, Role.SDK, Role.MCP, Role.E2B)),
            Map.entry(Role.SDK, Set.of()),
            Map.entry(Role.MCP, Set.of(Role.SDK)),
            Map.entry(Role.E2B, Set.of(Role.SDK)),
            Map.entry(Role.CLI, Set.of(Role.SDK, Role.MCP)),
            Map.entry(Role.EXAMPLES, Set.of(Role.SDK)),
            Map.entry(Role.BENCH, Set.of(Role.values())));

    /** What core must not do: file, network and process I/O belong to adapters, wired in by the server. */
    private static final Pattern CORE_IO = Pattern.compile("\\bFiles\\.|\\bProcessBuilder\\b|Runtime\\.getRuntime\\(\\)\\.exec"
            + "|new (FileInputStream|FileOutputStream|RandomAccessFile|Socket|ServerSocket|DatagramSocket)\\("
            + "|\\b(FileChannel|SocketChannel|ServerSocketChannel)\\.open|InetAddress\\.get(All)?ByName|NetworkInterface\\.|\\bHttpClient\\b");

    private static final Pattern USE = Pattern.compile("\\bio\\.stasis\\.([a-z0-9_]+(?:\\.[a-z0-9_]+)?)");

    @Test
    void everyModuleWithCodeHasARole() {
        assertThat(modulesWithCode()).as("a new module gets a role here and in docs/ARCHITECTURE.md").isEqualTo(new TreeSet<>(MODULES.keySet()));
    }

    @Test
    void dependenciesPointInwards() {
        var owners = packageOwners();
        var violations = new ArrayList<String>();
        for (String module : modulesWithCode()) {
            Role role = MODULES.get(module);
            forEachSource(module, (file, text) -> {
                var matcher = USE.matcher(withoutComments(text));
                var seen = new TreeSet<String>();
                while (matcher.find()) {
                    String used = owner(owners, matcher.group(1));
                    if (used == null || used.equals(module) || !seen.add(used)) continue;
                    Role usedRole = MODULES.get(used);
                    if (usedRole != role && !MAY_USE.get(role).contains(usedRole))
                        violations.add(module + " (" + role + ") uses " + used + " (" + usedRole + ") in " + file);
                    else if (role == Role.ADAPTER && usedRole == Role.ADAPTER)
                        violations.add("adapter " + module + " uses adapter " + used + " in " + file);
                }
            });
        }
        assertThat(violations).isEmpty();
    }

    @Test
    void coreDoesNoIoAndStartsNoProcess() {
        var found = new TreeMap<String, String>();
        forEachSource("core", (file, text) -> {
            var code = withoutComments(text);
            var matcher = CORE_IO.matcher(code);
            if (matcher.find()) found.put(file, matcher.group());
        });
        assertThat(found).as("I/O in core: give it an SPI and an adapter").isEmpty();
    }

    private static String owner(Map<String, String> owners, String usedPackage) {
        String found = owners.get(usedPackage);
        if (found != null) return found;
        int dot = usedPackage.indexOf('.');
        return dot < 0 ? null : owners.get(usedPackage.substring(0, dot));
    }

    /** The first two package levels below io.stasis of each module's code ({@code core.spi}, {@code blob.s3}), or the one it has ({@code sdk}). */
    private static Map<String, String> packageOwners() {
        var owners = new TreeMap<String, String>();
        for (String module : modulesWithCode()) {
            Path root = mainJava(module).resolve("io/stasis");
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(p -> p.toString().endsWith(".java")).forEach(p -> {
                    var parts = root.relativize(p.getParent()).toString().split("/");
                    owners.put(parts.length == 1 ? parts[0] : parts[0] + "." + parts[1], module);
                });
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return owners;
    }

    private static Set<String> modulesWithCode() {
        try (Stream<Path> dirs = Files.list(Bash.ROOT)) {
            return dirs.filter(d -> Files.isDirectory(mainJava(d.getFileName().toString())))
                    .map(d -> d.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path mainJava(String module) {
        return Bash.ROOT.resolve(module).resolve("src/main/java");
    }

    private interface SourceVisitor {
        void visit(String file, String text);
    }

    private static void forEachSource(String module, SourceVisitor visitor) {
        Path root = mainJava(module);
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList())
                visitor.visit(root.relativize(file).toString(), Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The code without its comments, so that a comment naming a class is no use of it. */
    static String withoutComments(String text) {
        return text.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("(?m)//.*$", " ");
    }
}

package io.stasis.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When ./stasis rebuilds the CLI (scripts/lib/build.sh): an edit in any module it is built from. */
class BuildStalenessTest {
    @TempDir
    Path tmp;

    @Test
    void theCliIsBuiltFromItselfAndEveryModuleItNeedsAtRunTime() throws Exception {
        var result = Bash.run("module_closure cli\nprintf '%s\\n' \"${MODULES[@]}\"");
        assertThat(result.out().lines()).containsExactlyInAnyOrder("cli", "sdk", "mcp");
        var server = Bash.run("module_closure server\nprintf '%s\\n' \"${MODULES[@]}\"");
        assertThat(server.out().lines()).contains("server", "core", "runtime-runc", "sdk", "mcp").doesNotContain("testkit", "bench");
    }

    @Test
    void anEditInAModuleTheCliContainsMakesItStaleAndOneElsewhereDoesNot() throws Exception {
        // A checkout of three modules: cli needs mcp, which needs sdk; core stands apart.
        module("sdk", "");
        module("mcp", dependency("sdk"));
        module("cli", dependency("mcp") + dependency("core") .replace("<dependency>", "<dependency><scope>test</scope>"));
        module("core", "");
        Files.writeString(tmp.resolve("pom.xml"), "<project/>");
        Files.createDirectories(tmp.resolve("cli/target"));
        Files.writeString(tmp.resolve("cli/target/stasis-cli.jar"), "");
        Files.createDirectories(tmp.resolve(".build"));
        Files.writeString(tmp.resolve(".build/stamp.cli"), "");
        var past = FileTime.from(Instant.now().minusSeconds(3600));
        try (var walk = Files.walk(tmp)) {
            for (Path p : walk.toList()) Files.setLastModifiedTime(p, past);
        }
        Files.setLastModifiedTime(tmp.resolve(".build/stamp.cli"), FileTime.from(Instant.now().minusSeconds(60)));

        assertThat(staleReason()).isEmpty();
        Files.writeString(tmp.resolve("core/src/main/java/A.java"), "// edited");
        assertThat(staleReason()).as("core is only a test dependency of cli").isEmpty();
        Files.writeString(tmp.resolve("mcp/src/main/java/A.java"), "// edited");
        assertThat(staleReason()).isEqualTo("mcp/src/main/java/A.java changed");
    }

    private String staleReason() throws Exception {
        var result = Bash.run("STASIS_ROOT=" + Bash.quote(tmp.toString()) + "\nSTASIS_BUILD_DIR=$STASIS_ROOT/.build\n"
                + "build_stale_reason cli\nprintf '%s' \"$STALE_REASON\"");
        assertThat(result.code()).as(result.err()).isZero();
        return result.out();
    }

    private void module(String name, String dependencies) throws Exception {
        Files.createDirectories(tmp.resolve(name + "/src/main/java"));
        Files.writeString(tmp.resolve(name + "/src/main/java/A.java"), "// " + name);
        Files.writeString(tmp.resolve(name + "/pom.xml"), "<project>\n  <dependencies>\n" + dependencies + "  </dependencies>\n</project>\n");
    }

    private static String dependency(String module) {
        return "    <dependency><groupId>io.stasis</groupId><artifactId>stasis-" + module + "</artifactId></dependency>\n";
    }
}

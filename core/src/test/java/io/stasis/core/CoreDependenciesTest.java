package io.stasis.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The core is the domain: it runs no process, touches no adapter and depends on the JDK and slf4j only. */
class CoreDependenciesTest {
    private static final Path SOURCES = Path.of("src/main/java");
    private static final Pattern IMPORT = Pattern.compile("^import (static )?([\\w.]+)", Pattern.MULTILINE);

    @Test
    void coreImportsOnlyTheJdkSlf4jAndItself() throws IOException {
        var offending = new ArrayList<String>();
        for (Path file : sources()) {
            var m = IMPORT.matcher(Files.readString(file));
            while (m.find()) {
                String imported = m.group(2);
                boolean allowed = imported.startsWith("java.") || imported.startsWith("javax.")
                        || imported.startsWith("org.slf4j.") || imported.startsWith("io.stasis.core.");
                if (!allowed) offending.add(SOURCES.relativize(file) + ": " + imported);
            }
        }
        assertThat(offending).isEmpty();
    }

    @Test
    void coreStartsNoProcessAndUsesNoNativeCalls() throws IOException {
        var offending = new ArrayList<String>();
        for (Path file : sources()) {
            String text = Files.readString(file);
            for (String banned : List.of("ProcessBuilder", "Runtime.getRuntime().exec", "java.lang.foreign"))
                if (text.contains(banned)) offending.add(SOURCES.relativize(file) + ": " + banned);
        }
        assertThat(offending).isEmpty();
    }

    @Test
    void keyedLocksAreAllKeyedLock() throws IOException {
        // A map of locks by hand either grows forever or, once entries are removed, lets two holders in at once.
        var mapOfLocks = Pattern.compile("Map<[^;=]*,\\s*[\\w.]*Lock>");
        var offending = new ArrayList<String>();
        for (Path file : sources()) {
            if (file.endsWith(Path.of("io/stasis/core/concurrent/KeyedLock.java"))) continue;
            if (mapOfLocks.matcher(Files.readString(file)).find()) offending.add(SOURCES.relativize(file).toString());
        }
        assertThat(offending).isEmpty();
    }

    private static List<Path> sources() throws IOException {
        try (Stream<Path> walk = Files.walk(SOURCES)) {
            return walk.filter(p -> p.toString().endsWith(".java")).toList();
        }
    }
}

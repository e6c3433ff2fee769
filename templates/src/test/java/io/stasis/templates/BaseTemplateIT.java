package io.stasis.templates;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.error.StasisException;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.FileTrees;
import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import io.stasis.host.ToolRunner;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds the real base template. The first run on a machine bootstraps from the host's Debian
 * mirror (~1-2 min) and leaves the tarball in the default cache dir; later runs restore it.
 */
@Tag("root")
class BaseTemplateIT {
    @TempDir
    Path work;

    @AfterEach
    void noMountsLeft() throws Exception {
        var left = MountInfo.read().atOrBelow(work.toRealPath());
        Mounts.fromSystem().unmountAllBelow(work); // never let @TempDir delete through a mount
        FileTrees.deleteContents(work); // quietly: JUnit warns about every absolute symlink in a Debian tree
        assertThat(left).as("mounts left under the build dir").isEmpty();
    }

    @Test
    void buildsATreeWithPythonCurlPsAndIpThenRestoresItFromTheCache() throws Exception {
        assumeTrue(Debootstrap.fromSystem().installed(), "debootstrap is not installed");
        var recipe = new BaseTemplate();
        assertThat(recipe.slow()).isTrue();
        boolean cachedBefore = Files.isRegularFile(recipe.cacheFile());

        Path first = Files.createDirectory(work.resolve("first"));
        var progress = new CopyOnWriteArrayList<Double>();
        long t0 = System.nanoTime();
        recipe.populate(first, (fraction, message) -> progress.add(fraction));
        long firstMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("TIMING base populate %d ms (%s), %d progress reports%n", firstMs,
                cachedBefore ? "from cache" : "debootstrap + cache write", progress.size());

        for (String program : List.of("python3", "curl", "ps", "ip", "sh"))
            assertThat(BaseTemplate.findProgram(first, program)).as(program).isNotNull();
        assertThat(first.resolve("etc/os-release")).content().contains("bookworm");
        assertThat(first.resolve("etc/resolv.conf")).isEmptyFile();
        assertThat(first.resolve("etc/ssl/certs/ca-certificates.crt")).exists();
        assertThat(listDebs(first.resolve("var/cache/apt/archives"))).isEmpty();
        assertThat(MountInfo.read().atOrBelow(first.toRealPath())).isEmpty();
        assertThat(recipe.cacheFile()).isRegularFile();
        if (!cachedBefore) assertThat(progress).isSorted().last().isEqualTo(0.98);

        Path second = Files.createDirectory(work.resolve("second"));
        long t1 = System.nanoTime();
        recipe.populate(second, TemplateRecipe.Progress.NONE);
        System.out.printf("TIMING base restore from cache %d ms (%d bytes cached)%n",
                (System.nanoTime() - t1) / 1_000_000, Files.size(recipe.cacheFile()));
        assertThat(BaseTemplate.findProgram(second, "python3")).isNotNull();
        // Numeric owners and modes survive the cache: setuid su, root-owned tree.
        Path su = second.resolve("usr/bin/su");
        if (Files.exists(su)) assertThat((Integer) Files.getAttribute(su, "unix:mode") & 04000).isEqualTo(04000);
        assertThat(Files.getAttribute(second.resolve("usr/bin/python3"), "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0);
    }

    @Test
    void aFailedBootstrapLeavesNoMountsAndADamagedCacheIsDropped() throws Exception {
        assumeTrue(Debootstrap.fromSystem().installed(), "debootstrap is not installed");
        // A mirror on loopback where nothing listens: debootstrap fails at once, no traffic leaves the host.
        Path sources = Files.writeString(work.resolve("debian.sources"), """
                Types: deb
                URIs: http://127.0.0.1:9/debian
                Suites: bookworm
                Components: main
                """);
        Path cacheDir = Files.createDirectory(work.resolve("cache"));
        var tar = Tar.fromSystem();
        var recipe = new BaseTemplate(cacheDir, Debootstrap.fromSystem(), tar, new AptSources(sources, work.resolve("none")));
        Files.writeString(recipe.cacheFile(), "not a tarball");
        Path target = Files.createDirectory(work.resolve("target"));

        var messages = new ArrayList<String>();
        assertThatThrownBy(() -> recipe.populate(target, (f, m) -> messages.add(m)))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.getMessage()).contains("debootstrap bookworm failed").contains("127.0.0.1:9");
                    assertThat(e.details()).containsKey("output");
                });
        assertThat(recipe.cacheFile()).doesNotExist();
        assertThat(messages).anyMatch(m -> m.contains("restoring from cache"));
        assertThat(MountInfo.read().atOrBelow(target.toRealPath())).isEmpty();
    }

    @Test
    void debootstrapTimesOutAndKillsItsChildren() throws Exception {
        assumeTrue(Debootstrap.fromSystem().installed(), "debootstrap is not installed");
        // 1 ms is shorter than debootstrap's own start-up.
        var debootstrap = new Debootstrap(ToolRunner.locate("debootstrap"), Duration.ofMillis(1), Mounts.fromSystem());
        Path target = Files.createDirectory(work.resolve("target"));
        assertThatThrownBy(() -> debootstrap.bootstrap("bookworm", "minbase", List.of(), target, "http://127.0.0.1:9/debian",
                TemplateRecipe.Progress.NONE)).isInstanceOf(StasisException.class).hasMessageContaining("did not finish");
    }

    private static List<Path> listDebs(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) return List.of();
        try (var files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".deb")).toList();
        }
    }
}

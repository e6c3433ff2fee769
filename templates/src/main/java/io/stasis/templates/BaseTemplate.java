package io.stasis.templates;

import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code base}: Debian 12 (bookworm) minbase with python3, procps, iproute2, ca-certificates and
 * curl, bootstrapped from the mirror the host's apt uses (45-80 s, ~250 MB). The finished tree is
 * kept as a tarball in a cache directory, named with the recipe version, so later builds (a
 * rebuilt pool, another machine sharing the cache, CI re-runs) restore it in seconds.
 */
public final class BaseTemplate implements TemplateRecipe {
    private static final Logger log = LoggerFactory.getLogger(BaseTemplate.class);
    /** Bump when the recipe (suite, packages, slimming) changes: caches and templates are then rebuilt. */
    public static final String VERSION = "bookworm-2";
    public static final Path DEFAULT_CACHE_DIR = Path.of("/var/cache/stasis/templates");
    static final String SUITE = "bookworm";
    static final String VARIANT = "minbase";
    static final List<String> PACKAGES = List.of("python3", "procps", "iproute2", "ca-certificates", "curl", "git");
    /** What a usable tree has; a cache that restores without them is broken. */
    static final List<String> REQUIRED_PROGRAMS = List.of("sh", "python3", "curl", "ps", "ip");

    private final Path cacheDir;
    private final Debootstrap debootstrap;
    private final Tar tar;
    private final AptSources sources;

    public BaseTemplate() {
        this(DEFAULT_CACHE_DIR);
    }

    public BaseTemplate(Path cacheDir) {
        this(cacheDir, Debootstrap.fromSystem(), Tar.fromSystem(), AptSources.system());
    }

    BaseTemplate(Path cacheDir, Debootstrap debootstrap, Tar tar, AptSources sources) {
        this.cacheDir = cacheDir;
        this.debootstrap = debootstrap;
        this.tar = tar;
        this.sources = sources;
    }

    @Override
    public String name() {
        return "base";
    }

    @Override
    public String version() {
        return VERSION;
    }

    @Override
    public String description() {
        return "Debian 12 (bookworm) minbase with python3, git, curl, ca-certificates, procps and iproute2";
    }

    @Override
    public boolean slow() {
        return true;
    }

    /**
     * The hosts of this host's apt sources: what a template build may reach by default, so that apt
     * in a build on base works where apt on the host does (no mirror is named in code).
     */
    public static List<String> hostAptMirrors() {
        return AptSources.system().hosts();
    }

    /** The cache file for this version (it may not exist). */
    public Path cacheFile() {
        return cacheDir.resolve("base-" + VERSION + tar.extension());
    }

    @Override
    public void populate(Path dir, Progress progress) throws IOException {
        if (restoreFromCache(dir, progress)) return;
        String mirror = sources.mirrorFor(SUITE).orElseThrow(() -> Failures.tool("build template base",
                "no Debian mirror for " + SUITE + " in " + sources.searched()));
        progress.report(0, "bootstrapping Debian " + SUITE + " from " + mirror);
        debootstrap.bootstrap(SUITE, VARIANT, PACKAGES, dir, mirror, progress);
        progress.report(0.97, "slimming");
        slim(dir);
        requirePrograms(dir);
        writeCache(dir, progress);
    }

    private boolean restoreFromCache(Path dir, Progress progress) throws IOException {
        Path cached = cacheFile();
        if (!Files.isRegularFile(cached)) return false;
        long start = System.nanoTime();
        progress.report(0.1, "restoring from cache " + cached.getFileName());
        try {
            tar.extract(cached, dir);
            requirePrograms(dir);
            log.atInfo().addKeyValue("cache", cached).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("base restored from cache");
            progress.report(0.97, "restored from cache");
            return true;
        } catch (RuntimeException e) {
            // The build directory vanished under the extraction (the service stopped and the pool
            // went): the cache is not at fault and other builds still need it.
            if (!Files.isDirectory(dir)) throw e;
            // A damaged cache costs one slow build, not a broken template.
            log.atWarn().addKeyValue("cache", cached).setCause(e).log("cache unusable; deleting it and bootstrapping");
            Files.deleteIfExists(cached);
            FileTrees.deleteContents(dir);
            return false;
        }
    }

    /** Caches are an optimisation: failing to write one is logged, not fatal. */
    private void writeCache(Path dir, Progress progress) {
        Path partial = cacheDir.resolve(".partial-" + UUID.randomUUID() + tar.extension());
        try {
            progress.report(0.98, "caching the tree");
            Files.createDirectories(cacheDir);
            long start = System.nanoTime();
            tar.create(dir, partial);
            Files.move(partial, cacheFile(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            log.atInfo().addKeyValue("cache", cacheFile()).addKeyValue("bytes", Files.size(cacheFile()))
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("base cached");
            removeStaleCaches();
        } catch (IOException | RuntimeException e) {
            log.atWarn().addKeyValue("cache", cacheFile()).setCause(e).log("could not cache the base tree");
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // nothing more to do: a stray partial file is removed by the next successful cache write
            }
        }
    }

    /** Older versions and interrupted writes. */
    private void removeStaleCaches() throws IOException {
        String current = cacheFile().getFileName().toString();
        try (Stream<Path> files = Files.list(cacheDir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.equals(current)) continue;
                if (name.startsWith("base-") || name.startsWith(".partial-")) Files.deleteIfExists(f);
            }
        }
    }

    /** Package caches and lists: apt downloads fresh ones on the next {@code apt-get update}. */
    static void slim(Path dir) throws IOException {
        deleteFiles(dir.resolve("var/cache/apt/archives"), name -> name.endsWith(".deb"));
        deleteFiles(dir.resolve("var/cache/apt/archives/partial"), name -> true);
        deleteFiles(dir.resolve("var/cache/apt"), name -> name.endsWith(".bin"));
        deleteFiles(dir.resolve("var/lib/apt/lists"), name -> !name.equals("lock"));
        deleteFiles(dir.resolve("var/lib/apt/lists/partial"), name -> true);
        // debootstrap copies the host's resolver and hostname; a sandbox gets its own from the runtime.
        Files.writeString(dir.resolve("etc/resolv.conf"), "");
        Files.writeString(dir.resolve("etc/hostname"), "localhost\n");
    }

    private static void deleteFiles(Path dir, Predicate<String> which) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) return;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList())
                if (!Files.isDirectory(f, LinkOption.NOFOLLOW_LINKS) && which.test(f.getFileName().toString())) Files.delete(f);
        }
    }

    static void requirePrograms(Path dir) {
        var missing = REQUIRED_PROGRAMS.stream().filter(p -> findProgram(dir, p) == null).toList();
        if (!missing.isEmpty()) throw Failures.tool("build template base", "the tree lacks " + missing);
    }

    /** Where {@code program} is in the tree (merged /usr: /bin is a relative link to usr/bin), or null. */
    static Path findProgram(Path dir, String program) {
        for (String bin : List.of("usr/local/bin", "usr/bin", "usr/sbin", "bin", "sbin")) {
            Path candidate = dir.resolve(bin).resolve(program);
            if (Files.exists(candidate, LinkOption.NOFOLLOW_LINKS)) return candidate;
        }
        return null;
    }
}

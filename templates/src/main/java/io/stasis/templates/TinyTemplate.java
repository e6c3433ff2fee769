package io.stasis.templates;

import io.stasis.core.spi.TemplateRecipe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code tiny}: a static busybox and a minimal /etc, about 2 MB, built in milliseconds. Every
 * applet is a symlink in /bin; /sbin, /usr/bin and /usr/sbin exist (empty) so a standard PATH
 * works. The busybox must be static (a dynamically linked one would find no libc in the sandbox).
 * {@code ./stasis setup} builds the one at {@link #INSTALLED_BUSYBOX}: 1.37, whose {@code wget -T}
 * works (bookworm's 1.35 crashes in it), with its {@code sleep} patched to sleep on across a CRIU
 * restore (docs/HOST.md).
 */
public final class TinyTemplate implements TemplateRecipe {
    private static final Logger log = LoggerFactory.getLogger(TinyTemplate.class);
    /** Bump when what {@link #populate} writes changes: installed templates are then rebuilt. */
    public static final String VERSION = "3";
    /** Where {@code ./stasis setup} installs the busybox of tiny. */
    public static final Path INSTALLED_BUSYBOX = Path.of("/opt/stasis/busybox/busybox");
    /** The distribution's busybox-static, the last resort. */
    public static final Path DISTRIBUTION_BUSYBOX = Path.of("/bin/busybox");

    private final Path busybox;

    /** With {@link #defaultBusybox()}. */
    public TinyTemplate() {
        this(defaultBusybox());
    }

    public TinyTemplate(Path busybox) {
        this.busybox = busybox;
    }

    /** {@code $STASIS_BUSYBOX} if set, else {@link #INSTALLED_BUSYBOX} if there, else {@link #DISTRIBUTION_BUSYBOX}. */
    public static Path defaultBusybox() {
        String env = System.getenv("STASIS_BUSYBOX");
        if (env != null && !env.isBlank()) return Path.of(env);
        return Files.isExecutable(INSTALLED_BUSYBOX) ? INSTALLED_BUSYBOX : DISTRIBUTION_BUSYBOX;
    }

    @Override
    public String name() {
        return "tiny";
    }

    @Override
    public String version() {
        return VERSION;
    }

    @Override
    public String description() {
        return "BusyBox only: a static busybox with its applets and a minimal /etc (~2 MB)";
    }

    @Override
    public void populate(Path dir, Progress progress) throws IOException {
        Path source = checkedBusybox();
        var tool = new Busybox(source);
        var applets = tool.applets();
        String version = tool.version();

        for (String d : new String[] {"bin", "sbin", "usr", "usr/bin", "usr/sbin", "etc", "proc", "sys", "dev", "run", "var", "home"})
            directory(dir.resolve(d), 0755);
        directory(dir.resolve("root"), 0700);
        directory(dir.resolve("tmp"), 01777);
        directory(dir.resolve("var/tmp"), 01777);

        Path target = dir.resolve("bin/busybox");
        Files.copy(source, target);
        Files.setAttribute(target, "unix:mode", 0755);
        for (String applet : applets) {
            if (applet.equals("busybox") || applet.contains("/")) continue;
            Files.createSymbolicLink(dir.resolve("bin").resolve(applet), Path.of("busybox"));
        }

        var etc = Map.of(
                "passwd", """
                        root:x:0:0:root:/root:/bin/sh
                        nobody:x:65534:65534:nobody:/nonexistent:/bin/false
                        """,
                "group", """
                        root:x:0:
                        nogroup:x:65534:
                        """,
                "hosts", """
                        127.0.0.1\tlocalhost
                        ::1\tlocalhost ip6-localhost ip6-loopback
                        """,
                // The runtime writes the sandbox's resolver; an empty file is a valid "no DNS yet".
                "resolv.conf", "",
                "os-release", """
                        PRETTY_NAME="Stasis tiny (BusyBox %s)"
                        NAME="Stasis tiny"
                        ID=stasis-tiny
                        VERSION_ID=%s
                        """.formatted(version, VERSION));
        for (var e : etc.entrySet()) {
            Path file = dir.resolve("etc").resolve(e.getKey());
            Files.writeString(file, e.getValue());
            Files.setAttribute(file, "unix:mode", 0644);
        }
        progress.report(1, "busybox " + version + " with " + applets.size() + " applets");
        log.atDebug().addKeyValue("dir", dir).addKeyValue("applets", applets.size()).log("tiny template populated");
    }

    private Path checkedBusybox() throws IOException {
        if (!Files.isRegularFile(busybox))
            throw Failures.tool("build template tiny", "no busybox at " + busybox + " (./stasis setup installs one)");
        Path real = busybox.toRealPath();
        if (!ElfBinary.isStatic(real))
            throw Failures.tool("build template tiny", busybox + " is not a statically linked ELF binary"
                    + " (./stasis setup installs a static one at " + INSTALLED_BUSYBOX + ")");
        return real;
    }

    private static void directory(Path path, int mode) throws IOException {
        if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) Files.createDirectory(path);
        Files.setAttribute(path, "unix:mode", mode); // explicit: the service's umask must not matter
    }
}

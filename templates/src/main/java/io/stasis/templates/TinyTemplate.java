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
 * {@code tiny}: the host's static busybox and a minimal /etc, about 2 MB, built in milliseconds.
 * Every applet is a symlink in /bin; /sbin, /usr/bin and /usr/sbin exist (empty) so a standard
 * PATH works. Needs Debian's busybox-static (a dynamically linked busybox would find no libc in
 * the sandbox).
 */
public final class TinyTemplate implements TemplateRecipe {
    private static final Logger log = LoggerFactory.getLogger(TinyTemplate.class);
    /** Bump when what {@link #populate} writes changes: installed templates are then rebuilt. */
    public static final String VERSION = "1";
    public static final Path DEFAULT_BUSYBOX = Path.of("/bin/busybox");

    private final Path busybox;

    public TinyTemplate() {
        this(DEFAULT_BUSYBOX);
    }

    public TinyTemplate(Path busybox) {
        this.busybox = busybox;
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
            throw Failures.tool("build template tiny", "no busybox at " + busybox + " (install Debian's busybox-static)");
        Path real = busybox.toRealPath();
        if (!ElfBinary.isStatic(real))
            throw Failures.tool("build template tiny", busybox + " is not a statically linked ELF binary"
                    + " (install Debian's busybox-static, which replaces the dynamic busybox)");
        return real;
    }

    private static void directory(Path path, int mode) throws IOException {
        if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) Files.createDirectory(path);
        Files.setAttribute(path, "unix:mode", mode); // explicit: the service's umask must not matter
    }
}

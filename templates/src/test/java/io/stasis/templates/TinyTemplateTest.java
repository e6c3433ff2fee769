package io.stasis.templates;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.error.StasisException;
import io.stasis.core.spi.TemplateRecipe;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TinyTemplateTest {
    @TempDir
    Path dir;

    @Test
    void populatesARunnableBusyboxTree() throws Exception {
        Path busybox = TinyTemplate.defaultBusybox();
        assumeTrue(Files.isRegularFile(busybox) && ElfBinary.isStatic(busybox),
                "needs a static busybox at " + busybox + " (./stasis setup installs one)");
        var recipe = new TinyTemplate();
        assertThat(recipe.name()).isEqualTo("tiny");
        assertThat(recipe.slow()).isFalse();
        assertThat(recipe.description()).containsIgnoringCase("busybox");

        double[] last = {-1};
        recipe.populate(dir, (fraction, message) -> last[0] = fraction);
        assertThat(last[0]).isEqualTo(1.0);

        assertThat(new Busybox(dir.resolve("bin/busybox")).applet("echo", "hi")).isEqualTo("hi");
        // Through an applet link, as PATH lookup inside the sandbox would find it.
        assertThat(Files.readSymbolicLink(dir.resolve("bin/sh"))).isEqualTo(Path.of("busybox"));
        assertThat(new Busybox(dir.resolve("bin/sh")).applet("-c", "echo via sh")).isEqualTo("via sh");
        assertThat(dir.resolve("bin/ls")).isSymbolicLink();
        for (String d : new String[] {"sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "run", "var/tmp"})
            assertThat(dir.resolve(d)).isDirectory();
        assertThat(mode(dir.resolve("root"))).isEqualTo(0700);
        assertThat(mode(dir.resolve("tmp"))).isEqualTo(01777);
        assertThat(mode(dir.resolve("var/tmp"))).isEqualTo(01777);
        assertThat(mode(dir.resolve("bin/busybox"))).isEqualTo(0755);
        assertThat(dir.resolve("etc/passwd")).content().startsWith("root:x:0:0:root:/root:/bin/sh\n").contains("nobody:x:65534");
        assertThat(dir.resolve("etc/group")).content().contains("root:x:0:");
        assertThat(dir.resolve("etc/hosts")).content().contains("127.0.0.1").contains("::1");
        assertThat(dir.resolve("etc/resolv.conf")).isEmptyFile();
        assertThat(dir.resolve("etc/os-release")).content().contains("ID=stasis-tiny").contains("BusyBox 1.");
        assertThat(Files.size(dir.resolve("bin/busybox"))).isLessThan(4 << 20);
    }

    @Test
    void refusesAMissingOrDynamicBusybox() {
        assertThatThrownBy(() -> new TinyTemplate(dir.resolve("nope")).populate(dir, TemplateRecipe.Progress.NONE))
                .isInstanceOf(StasisException.class).hasMessageContaining("no busybox at");
        assertThatThrownBy(() -> new TinyTemplate(Path.of("/bin/ls")).populate(dir, TemplateRecipe.Progress.NONE))
                .isInstanceOf(StasisException.class).hasMessageContaining("not a statically linked");
    }

    private static int mode(Path p) throws Exception {
        return (Integer) Files.getAttribute(p, "unix:mode") & 07777;
    }
}

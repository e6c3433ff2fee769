package io.stasis.templates;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ElfBinaryTest {
    @Test
    void tellsStaticFromDynamic(@TempDir Path dir) throws Exception {
        assertThat(ElfBinary.isStatic(Path.of("/bin/ls"))).isFalse();
        Path text = Files.writeString(dir.resolve("script"), "#!/bin/sh\necho hi\n".repeat(10));
        assertThat(ElfBinary.isStatic(text)).isFalse();
        assertThat(ElfBinary.isStatic(Files.write(dir.resolve("empty"), new byte[0]))).isFalse();
        assumeTrue(Files.isRegularFile(Path.of("/bin/busybox")), "busybox-static not installed");
        assertThat(ElfBinary.isStatic(Path.of("/bin/busybox"))).isTrue();
    }
}

package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretKeyFileTest {
    @TempDir
    Path dir;

    @Test
    void theKeyIsCreatedOwnerOnlyAndReadBackTheSame() throws Exception {
        Path file = dir.resolve("secrets.key");
        byte[] sealed = SecretKeyFile.loadOrCreate(file).seal("TOKEN", "sk-live-1");
        assertThat(Files.getPosixFilePermissions(file)).containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        assertThat(Files.size(file)).isEqualTo(32);
        assertThat(SecretKeyFile.loadOrCreate(file).open("TOKEN", sealed)).as("the same key after a restart").isEqualTo("sk-live-1");
        assertThat(dir.resolve("secrets.key.tmp")).doesNotExist();
    }

    @Test
    void aDamagedKeyFileIsRefusedByName() throws Exception {
        Path file = dir.resolve("secrets.key");
        Files.write(file, new byte[7]);
        assertThatThrownBy(() -> SecretKeyFile.loadOrCreate(file)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(file.toString()).hasStackTraceContaining("7 bytes, not 32");
    }
}

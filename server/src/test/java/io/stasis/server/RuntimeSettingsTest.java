package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.sandbox.RuntimeKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runtime flags: runc by default, gVisor on request where runsc is there, and refusals that say what to give instead. */
class RuntimeSettingsTest {
    @TempDir
    Path tmp;

    private String runsc() throws Exception {
        Path bin = tmp.resolve("runsc");
        Files.writeString(bin, "#!/bin/sh\n");
        Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin.toString();
    }

    @Test
    void sandboxesRunUnderRuncUnlessAskedOtherwise() {
        var runtimes = ServerConfig.parse("--runtimes-allowed", "runc").runtimes();
        assertThat(runtimes.defaultRuntime()).isEqualTo(RuntimeKind.RUNC);
        assertThat(runtimes.allowed()).containsExactly(RuntimeKind.RUNC);
        assertThat(ServerConfig.parse().runtimes().defaultRuntime()).isEqualTo(RuntimeKind.RUNC);
    }

    @Test
    void gvisorCanBeTheDefaultOrOnlyAllowed() throws Exception {
        var runtimes = ServerConfig.parse("--runsc", runsc(), "--runtime", "gvisor").runtimes();
        assertThat(runtimes.defaultRuntime()).isEqualTo(RuntimeKind.GVISOR);
        assertThat(runtimes.allowed()).contains(RuntimeKind.GVISOR);
        var only = ServerConfig.parse("--runsc", runsc(), "--runtime", "gvisor", "--runtimes-allowed", "gvisor").runtimes();
        assertThat(only.allowed()).containsExactly(RuntimeKind.GVISOR);
    }

    @Test
    void badValuesAreRefusedWithWhatToGiveInstead() throws Exception {
        assertThatThrownBy(() -> ServerConfig.parse("--runtime", "kata")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("kata").hasMessageContaining("runc, gvisor");
        assertThatThrownBy(() -> ServerConfig.parse("--runsc", runsc(), "--runtime", "gvisor", "--runtimes-allowed", "runc"))
                .isInstanceOf(ServerConfig.UsageException.class).hasMessage("--runtime gvisor is not among --runtimes-allowed runc");
        assertThatThrownBy(() -> ServerConfig.parse("--runsc", tmp.resolve("missing").toString(), "--runtimes-allowed", "runc,gvisor"))
                .isInstanceOf(ServerConfig.UsageException.class).hasMessageContaining("no runsc at " + tmp.resolve("missing"));
        assertThatThrownBy(() -> ServerConfig.parse("--runtimes-allowed", ",")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("needs at least one of runc, gvisor");
        assertThat(ServerConfig.usage()).contains("--runtime runc|gvisor", "--runtimes-allowed LIST", "--runsc PATH");
    }
}

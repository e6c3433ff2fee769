package io.stasis.network.linux;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Forwarding shared by instances: turned off by the last one to let go, and only if it was off before. */
class IpForwardingTest {
    @TempDir
    Path dir;

    private String value(Path sysctl) throws Exception {
        return Files.readString(sysctl).strip();
    }

    @Test
    void theLastInstanceTurnsItBackOffWhenItWasOff() throws Exception {
        Path sysctl = Files.writeString(dir.resolve("ip_forward"), "0\n");
        var forwarding = new IpForwarding(dir.resolve("owners"), sysctl, owner -> true);
        forwarding.require("stasis_a");
        forwarding.require("stasis_b");
        assertThat(value(sysctl)).isEqualTo("1");
        forwarding.release("stasis_a");
        assertThat(value(sysctl)).as("b still needs it").isEqualTo("1");
        forwarding.release("stasis_b");
        assertThat(value(sysctl)).isEqualTo("0");
    }

    @Test
    void forwardingThatWasOnStaysOn() throws Exception {
        Path sysctl = Files.writeString(dir.resolve("ip_forward"), "1\n");
        var forwarding = new IpForwarding(dir.resolve("owners"), sysctl, owner -> true);
        forwarding.require("stasis_a");
        forwarding.release("stasis_a");
        assertThat(value(sysctl)).isEqualTo("1");
    }

    @Test
    void anInstanceKilledForGoodDoesNotKeepItOnForever() throws Exception {
        Path sysctl = Files.writeString(dir.resolve("ip_forward"), "0\n");
        var running = new HashSet<>(List.of("stasis_a", "stasis_b"));
        var forwarding = new IpForwarding(dir.resolve("owners"), sysctl, running::contains);
        forwarding.require("stasis_a");
        forwarding.require("stasis_b");
        running.remove("stasis_b"); // killed: its table is gone, its claim is not
        forwarding.release("stasis_a");
        assertThat(value(sysctl)).isEqualTo("0");
        assertThat(dir.resolve("owners").resolve("stasis_b")).doesNotExist();
    }

    @Test
    void aKilledInstanceThatStartsAgainKeepsTheMark() throws Exception {
        Path sysctl = Files.writeString(dir.resolve("ip_forward"), "0\n");
        new IpForwarding(dir.resolve("owners"), sysctl, owner -> true).require("stasis_a");
        // The instance dies without letting go; its next start finds forwarding on, and the mark says who turned it on.
        var restarted = new IpForwarding(dir.resolve("owners"), sysctl, owner -> true);
        restarted.require("stasis_a");
        restarted.release("stasis_a");
        assertThat(value(sysctl)).isEqualTo("0");
    }
}

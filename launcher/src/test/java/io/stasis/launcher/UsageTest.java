package io.stasis.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** ./stasis help runs under set -u: its text once named a variable the busybox step no longer has, and it failed. */
class UsageTest {
    @Test
    void helpPrintsEveryCommand() throws Exception {
        var result = Bash.run("exec ./stasis help");
        assertThat(result.err()).isEmpty();
        assertThat(result.code()).isZero();
        assertThat(result.out()).contains("up [SERVER FLAGS]", "test [MAVEN ARGS]", "setup ", "gVisor's runsc");
    }
}

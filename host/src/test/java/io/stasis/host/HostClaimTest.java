package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostClaimTest {
    @TempDir
    Path dir;

    @Test
    void aClaimedNameIsRefusedWithItsHolderUntilReleased() {
        var first = HostClaim.take(dir, "network-table", "stasis", "instance A");
        assertThat(first).isInstanceOf(HostClaim.Result.Claimed.class);
        assertThat(HostClaim.take(dir, "network-table", "stasis", "instance B"))
                .isEqualTo(new HostClaim.Result.Taken("instance A"));
        assertThat(HostClaim.take(dir, "network-table", "other", "instance B")).isInstanceOf(HostClaim.Result.Claimed.class);
        assertThat(HostClaim.isFree(dir, "network-table", "stasis")).isFalse();
        ((HostClaim.Result.Claimed) first).claim().close();
        assertThat(HostClaim.isFree(dir, "network-table", "stasis")).as("and a look gives it back").isTrue();
        assertThat(HostClaim.take(dir, "network-table", "stasis", "instance B")).isInstanceOf(HostClaim.Result.Claimed.class);
    }

    /** The locks are the process's: a look at its own claim (here, a refused second one) must not drop it. */
    @Test
    void aClaimStaysHeldAgainstOtherProcessesAfterThisProcessIsRefusedIt() throws Exception {
        var first = HostClaim.take(dir, "network-table", "stasis", "instance A");
        assertThat(first).isInstanceOf(HostClaim.Result.Claimed.class);
        assertThat(HostClaim.take(dir, "network-table", "stasis", "instance B")).isInstanceOf(HostClaim.Result.Taken.class);
        assertThat(takeInAnotherProcess(dir.resolve("network-table-stasis.lock"))).isEqualTo("Taken[holder=instance A]");
        ((HostClaim.Result.Claimed) first).claim().close();
        assertThat(takeInAnotherProcess(dir.resolve("network-table-stasis.lock"))).startsWith("Claimed");
    }

    private static String takeInAnotherProcess(Path file) throws Exception {
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        var process = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), AnotherProcess.class.getName(), file.toString())
                .redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(process.waitFor()).as(out).isZero();
        return out;
    }

    /** Takes the claim of the file in its argument and prints the result. */
    public static final class AnotherProcess {
        public static void main(String[] args) {
            System.out.println(HostClaim.take(Path.of(args[0]), "another process"));
        }
    }

    @Test
    void valuesThatAreNotFileNamesStillGetOneClaimEach() {
        assertThat(HostClaim.take(dir, "network-range", "10.200.0.0/16", "A")).isInstanceOf(HostClaim.Result.Claimed.class);
        assertThat(HostClaim.take(dir, "network-range", "10.200.0.0/16", "B")).isInstanceOf(HostClaim.Result.Taken.class);
        assertThat(dir.toFile().list()).containsExactly("network-range-10.200.0.0_16.lock");
    }
}

package io.stasis.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The set-up step of gVisor's runsc (scripts/lib/runsc.sh): how it reads a runsc's release, and
 * that a verified install is taken as it is, with no root, network or apt, and that the verification
 * a new install goes through runs a real gVisor sandbox (a commit once removed that function, and
 * only a machine without runsc noticed: the install itself runs on a fresh root in
 * {@code ./stasis test-fresh}, where no gVisor sandbox can run).
 */
class RunscStepTest {
    private static final String LIBS = "source \"$STASIS_ROOT/scripts/lib/setup.sh\"\nsource \"$STASIS_ROOT/scripts/lib/debian.sh\"\n"
            + "source \"$STASIS_ROOT/scripts/lib/runsc.sh\"\n";

    @TempDir
    Path tmp;

    private Path fakeRunsc(String versionOutput) throws Exception {
        Path bin = tmp.resolve("runsc");
        Files.writeString(bin, "#!/bin/sh\nprintf '%s' " + Bash.quote(versionOutput) + "\n");
        Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin;
    }

    @Test
    void theReleaseIsTheDateInTheVersionLineWhateverItsPrefix() throws Exception {
        for (var version : new String[]{"runsc version 0.0~20240729.0\nspec: 1.0.2-dev\n", "runsc version release-20250101.0\nspec: 1.1.0\n"}) {
            var result = Bash.run(LIBS + "runsc_release_of " + Bash.quote(fakeRunsc(version).toString()));
            assertThat(result.code()).as(result.err()).isZero();
            assertThat(result.out()).isIn("20240729\n", "20250101\n");
        }
    }

    @Test
    void aBinaryThatIsNotRunscHasNoRelease() throws Exception {
        var result = Bash.run(LIBS + "runsc_release_of " + Bash.quote(fakeRunsc("runc version 1.1.5\n").toString()));
        assertThat(result.code()).isNotZero();
        assertThat(result.out()).isEmpty();
    }

    @Test
    void aVerifiedInstallIsTakenAsItIs() throws Exception {
        fakeRunsc("runsc version 0.0~20240729.0\nspec: 1.0.2-dev\n");
        Files.writeString(tmp.resolve(".verified"), "runsc version 0.0~20240729.0\n");
        var result = Bash.run(LIBS + "RUNSC_PREFIX=" + Bash.quote(tmp.toString())
                + "\nrunsc_step");
        assertThat(result.code()).as(result.err()).isZero();
        assertThat(result.err()).contains("runsc: ok (cached, 20240729 at " + tmp.resolve("runsc") + ")");
    }

    @Test
    void theVerificationOfANewInstallRunsARealSandbox() throws Exception {
        Path installed = Path.of("/opt/stasis/runsc/runsc");
        assumeTrue(Files.isExecutable(installed) && Files.isReadable(Path.of("/proc/self/ns/user"))
                && new ProcessBuilder("unshare", "--user", "true").start().waitFor() == 0, "runsc installed and user namespaces allowed");
        assumeTrue("root".equals(System.getProperty("user.name")), "root");
        Path log = tmp.resolve("verify.log");
        var result = Bash.run(LIBS + "runsc_verify " + Bash.quote(installed.toString()) + " " + Bash.quote(tmp.toString()) + " "
                + Bash.quote(log.toString()));
        assertThat(result.code()).as(result.err() + Files.readString(log)).isZero();
        assertThat(Files.readString(log)).contains("verify: exit 0, output stasis-runsc-ok");
    }
}

package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the service reads in CRIU's logs: a full disk, a known limit, a finished dump. */
class CriuLogTest {
    @TempDir
    Path dir;

    private Path log(String... lines) throws Exception {
        return Files.write(dir.resolve("dump.log"), List.of(lines));
    }

    @Test
    void aFullDiskIsTheLineThatSaysSoWithoutItsTimestamp() throws Exception {
        var full = log("(00.069169) Error (criu/util.c:657): exited, status=2",
                "(00.069196) Error (criu/bfd.c:131): bfd: Error flushing image: No space left on device",
                "(00.075625) Error (criu/cr-dump.c:1975): Dumping FAILED.");
        assertThat(CriuLog.diskFull(full)).contains("Error (criu/bfd.c:131): bfd: Error flushing image: No space left on device");
        assertThat(CriuLog.diskFull(log("(00.1) Error (criu/files-reg.c:1): write: Disk quota exceeded"))).isPresent();
        assertThat(CriuLog.diskFull(log("(00.075625) Error (criu/cr-dump.c:1975): Dumping FAILED."))).isEmpty();
        assertThat(CriuLog.diskFull(dir.resolve("absent.log"))).isEmpty();
    }

    @Test
    void aDumpFinishedOnlyWhenCriuSaysSoAtItsEnd() throws Exception {
        assertThat(CriuLog.dumpFinished(log("(00.1) Dumping finished successfully"))).isTrue();
        assertThat(CriuLog.dumpFinished(log("(00.1) Error (criu/cr-dump.c:1975): Dumping FAILED."))).isFalse();
        assertThat(CriuLog.dumpFinished(dir.resolve("absent.log"))).isFalse();
    }

    @Test
    void fileLocksAndJobControlTerminalsAreKnownLimits() throws Exception {
        assertThat(CriuLog.unsupportedState(log("(00.1) Error (criu/file-lock.c:1): Some file locks are hold, use --file-locks")))
                .hasValueSatisfying(why -> assertThat(why).contains("file lock"));
        assertThat(CriuLog.unsupportedState(log("(00.1) Error (criu/tty.c:1): tty: ctty inheritance detected")))
                .hasValueSatisfying(why -> assertThat(why).contains("/dev/tty"));
        assertThat(CriuLog.unsupportedState(log("(00.1) Error (criu/cr-dump.c:1975): Dumping FAILED."))).isEmpty();
    }
}

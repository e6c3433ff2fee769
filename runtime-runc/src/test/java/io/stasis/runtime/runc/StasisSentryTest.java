package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.host.ToolRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * stasis-sentry against a stand-in for a sentry's control server (gVisor's urpc: one JSON object
 * each way): the calls it makes, its marker, which must say exactly whether the tasks are held,
 * and the image files a save gives the sentry. RunscRuntimeIT runs it against real sentries.
 */
class StasisSentryTest {
    @TempDir
    Path dir;
    Path sentry;
    Path socket;
    Path marker;

    @BeforeEach
    void install() {
        sentry = HelperBinary.install(dir.resolve("bin"), HelperBinary.SENTRY);
        socket = dir.resolve("control.sock");
        marker = dir.resolve("tasks-held");
    }

    @Test
    void aPauseTheSentryAnsweredIsMarkedEvenWhenTheAnswerComesInPieces() throws Exception {
        var request = serveOnce("{\"success\":true,", "\"err\":\"\",\"result\":{}}");
        var result = run("pause");
        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        assertThat(request.get()).isEqualTo("{\"method\":\"containerManager.Pause\",\"arg\":null}");
        assertThat(marker).exists();
    }

    @Test
    void aResumeTheSentryAnsweredRemovesTheMarker() throws Exception {
        Files.writeString(marker, "");
        var request = serveOnce("{\"success\":true,\"err\":\"\",\"result\":{\"note\":\"a } in a string\"}}");
        var result = run("resume");
        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        assertThat(request.get()).contains("containerManager.Resume");
        assertThat(marker).doesNotExist();
    }

    @Test
    void aRefusedPauseTakesItsMarkerBackAndSaysWhy() throws Exception {
        serveOnce("{\"success\":false,\"err\":\"container not running\",\"result\":null}");
        var refused = run("pause");
        assertThat(refused.exitCode()).isEqualTo(1);
        assertThat(refused.stderrText()).contains("refused containerManager.Pause", "container not running");
        assertThat(marker).doesNotExist();
    }

    /** The sentry's Resume runs the tasks before anything in it can fail: a refusal still leaves them running. */
    @Test
    void aRefusedResumeLeavesNoMarkerAndSaysWhy() throws Exception {
        Files.writeString(marker, "");
        serveOnce("{\"success\":false,\"err\":\"after the resume\",\"result\":null}");
        var refused = run("resume");
        assertThat(refused.exitCode()).isEqualTo(1);
        assertThat(refused.stderrText()).contains("refused containerManager.Resume", "after the resume");
        assertThat(marker).doesNotExist();
    }

    @Test
    void aSentryThatCannotBeReachedChangesNoMarker() throws Exception {
        var gone = run("pause");
        assertThat(gone.exitCode()).isEqualTo(1);
        assertThat(gone.stderrText()).contains("connecting to " + socket);
        assertThat(marker).doesNotExist();

        Files.writeString(marker, "");
        assertThat(run("resume").exitCode()).isEqualTo(1);
        assertThat(marker).as("still held as far as anyone knows").exists();
    }

    /**
     * A sentry that has a whole call carries it out, answered or not: from then on the marker
     * says what the call asked, also when the answer never comes or is cut short.
     */
    @Test
    void aCallTheSentryHasCountsAsDoneWhenItsAnswerIsCutShort() throws Exception {
        serveOnce("{\"success\":tr"); // the connection ends mid-answer
        var cut = run("pause");
        assertThat(cut.exitCode()).isEqualTo(1);
        assertThat(cut.stderrText()).contains("reading the answer to containerManager.Pause", "the tasks count as held");
        assertThat(marker).exists();

        serveOnce("{\"success\":tr");
        assertThat(run("resume").exitCode()).isEqualTo(1);
        assertThat(marker).doesNotExist();
    }

    /**
     * The window that left tasks held with nothing to say so: killed while the sentry stops the
     * tasks (which can take long), the helper has already marked them held, and a resume is due.
     * The same for a resume: killed before the answer, its marker is already gone.
     */
    @Test
    void aHelperKilledWhileTheSentryWorksLeavesTheMarkerAsTheCallHasIt() throws Exception {
        var pause = serveSilently();
        var pausing = new ProcessBuilder(sentry.toString(), "pause", socket.toString(), marker.toString()).start();
        assertThat(pause.get(10, TimeUnit.SECONDS)).contains("containerManager.Pause");
        await(marker, true);
        pausing.destroyForcibly().waitFor();
        assertThat(marker).exists();

        var resume = serveSilently();
        var resuming = new ProcessBuilder(sentry.toString(), "resume", socket.toString(), marker.toString()).start();
        assertThat(resume.get(10, TimeUnit.SECONDS)).contains("containerManager.Resume");
        await(marker, false);
        resuming.destroyForcibly().waitFor();
        assertThat(marker).doesNotExist();
    }

    @Test
    void aBadCallIsRefusedWithItsUsage() throws Exception {
        var result = ToolRunner.run(List.of(sentry.toString(), "freeze", socket.toString(), marker.toString()), Duration.ofSeconds(10));
        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.stderrText()).contains("usage: stasis-sentry pause|resume SOCKET MARKER | save SOCKET DIR resume|stop");
    }

    @Test
    void aSaveMakesTheImagesThreeFilesAndAsksTheSentryAsRunscCheckpointDoes() throws Exception {
        Path image = Files.createDirectory(dir.resolve("image"));
        var request = serveOnce("{\"success\":true,\"err\":\"\",\"result\":null}");
        var result = ToolRunner.run(List.of(sentry.toString(), "save", socket.toString(), image.toString(), "resume"), Duration.ofSeconds(10));
        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        assertThat(request.get()).isEqualTo("{\"method\":\"containerManager.Checkpoint\",\"arg\":{\"key\":null,"
                + "\"metadata\":{\"compression\":\"none\"},\"MemoryFileSaveOpts\":{\"ExcludeCommittedZeroPages\":false},"
                + "\"have_pages_file\":true,\"Resume\":true}}");
        try (var files = Files.list(image)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactlyInAnyOrder("checkpoint.img", "pages_meta.img", "pages.img");
        }

        Path stopped = Files.createDirectory(dir.resolve("stopped"));
        request = serveOnce("{\"success\":true,\"err\":\"\",\"result\":null}");
        result = ToolRunner.run(List.of(sentry.toString(), "save", socket.toString(), stopped.toString(), "stop"), Duration.ofSeconds(10));
        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        assertThat(request.get()).endsWith("\"Resume\":false}}");
    }

    @Test
    void aSaveNeverWritesOverAnImageAndARefusedOneSaysWhy() throws Exception {
        Path image = Files.createDirectory(dir.resolve("image"));
        Files.writeString(image.resolve("checkpoint.img"), "an earlier save");
        var over = ToolRunner.run(List.of(sentry.toString(), "save", socket.toString(), image.toString(), "resume"), Duration.ofSeconds(10));
        assertThat(over.exitCode()).isEqualTo(1);
        assertThat(over.stderrText()).contains("creating the image file checkpoint.img");
        assertThat(image.resolve("checkpoint.img")).hasContent("an earlier save");

        Path fresh = Files.createDirectory(dir.resolve("fresh"));
        serveOnce("{\"success\":false,\"err\":\"checkpoint failed: a host socket\",\"result\":null}");
        var refused = ToolRunner.run(List.of(sentry.toString(), "save", socket.toString(), fresh.toString(), "stop"), Duration.ofSeconds(10));
        assertThat(refused.exitCode()).isEqualTo(1);
        assertThat(refused.stderrText()).contains("refused containerManager.Checkpoint", "a host socket");
    }

    /** Waits up to 5 s for {@code path} to be there ({@code present}) or gone. */
    private static void await(Path path, boolean present) throws InterruptedException {
        for (int i = 0; i < 500 && Files.exists(path) != present; i++) Thread.sleep(10);
    }

    private ToolRunner.Result run(String verb) throws Exception {
        return ToolRunner.run(List.of(sentry.toString(), verb, socket.toString(), marker.toString()), Duration.ofSeconds(10));
    }

    /**
     * Accepts one connection on {@link #socket}, reads the call (one JSON object) and writes
     * {@code answer}, a piece at a time, then hangs up; completes with the call.
     */
    private CompletableFuture<String> serveOnce(String... answer) throws Exception {
        return SentryStandIn.serve(socket, false, answer);
    }

    /** Accepts one connection, reads the call, completes with it, and never answers: a sentry still at work on it. */
    private CompletableFuture<String> serveSilently() throws Exception {
        return SentryStandIn.serve(socket, true);
    }
}

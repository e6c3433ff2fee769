package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A helper started ahead of its calls (stasis-ahead.h), on stasis-sentry against a stand-in for a
 * sentry's control server: the call gets its arguments, the next one waits started, the command
 * line of a running call is the one its arguments give, and nothing is left after close.
 */
class HelperAheadTest {
    private static final SandboxId ID = SandboxId.random();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final String SUCCESS = "{\"success\":true,\"err\":\"\",\"result\":{}}";

    @TempDir
    Path dir;
    Path sentry;
    Path socket;
    Path marker;
    HelperAhead helper;

    @BeforeEach
    void install() {
        sentry = HelperBinary.install(dir.resolve("bin"), HelperBinary.SENTRY);
        socket = dir.resolve("control.sock");
        marker = dir.resolve("tasks-held");
        helper = new HelperAhead(sentry);
    }

    @AfterEach
    void close() throws Exception {
        helper.close();
        awaitNoneWaiting();
    }

    @Test
    void eachCallGetsItsArgumentsAndTheNextOneFindsAHelperWaiting() throws Exception {
        var pause = SentryStandIn.serve(socket, false, SUCCESS);
        helper.run(ID, "hold the tasks", List.of("pause", socket.toString(), marker.toString()), TIMEOUT);
        assertThat(pause.get(10, TimeUnit.SECONDS)).contains("containerManager.Pause");
        assertThat(marker).exists();

        var waiting = awaitWaiting();
        var resume = SentryStandIn.serve(socket, false, SUCCESS);
        helper.run(ID, "release the tasks", List.of("resume", socket.toString(), marker.toString()), TIMEOUT);
        assertThat(resume.get(10, TimeUnit.SECONDS)).contains("containerManager.Resume");
        assertThat(marker).doesNotExist();
        assertThat(waiting.onExit().get(10, TimeUnit.SECONDS).isAlive()).as("the waiting helper made the call, and ended").isFalse();
        assertThat(awaitWaiting().pid()).as("and another waits").isNotEqualTo(waiting.pid());
    }

    /** A restarted service finds the saves under way of the one before it by their command line (Runsc.awaitEarlierWork). */
    @Test
    void aCallUnderWayShowsItsArgumentsOnItsCommandLine() throws Exception {
        var save = SentryStandIn.serve(socket, true);
        Files.createDirectories(dir.resolve("images"));
        var call = CompletableFuture.runAsync(() -> helper.run(ID, "save",
                List.of("save", socket.toString(), dir.resolve("images").toString(), "resume"), Duration.ofSeconds(3)));
        save.get(10, TimeUnit.SECONDS);
        assertThat(HostProcesses.running(List.of(sentry.toString(), "save", socket.toString()))).hasSize(1);
        assertThatThrownBy(call::join).hasCauseInstanceOf(StasisException.class).hasMessageContaining("did not finish within");
    }

    @Test
    void aFailedCallNamesItsStepAndQuotesTheHelper() {
        assertThatThrownBy(() -> helper.run(ID, "hold the tasks", List.of("pause", dir.resolve("none.sock").toString(), marker.toString()), TIMEOUT))
                .isInstanceOf(StasisException.class)
                .hasMessageContaining("hold the tasks")
                .hasMessageContaining("connecting to " + dir.resolve("none.sock"));
        assertThat(marker).doesNotExist();
    }

    @Test
    void closeEndsTheHelperThatWaits() throws Exception {
        assertThatThrownBy(() -> helper.run(ID, "hold the tasks", List.of("pause", dir.resolve("none.sock").toString(), marker.toString()), TIMEOUT))
                .isInstanceOf(StasisException.class);
        var waiting = awaitWaiting();
        helper.close();
        waiting.onExit().get(10, TimeUnit.SECONDS);
    }

    /** The helper waiting for the next call, once started and handed to the helper's owner. */
    private ProcessHandle awaitWaiting() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            var waiting = helper.waitingPid();
            if (waiting.isPresent()) return ProcessHandle.of(waiting.getAsLong()).orElseThrow();
            Thread.sleep(10);
        }
        throw new AssertionError("no helper waiting for the next call");
    }

    /** A helper started for a next call: a child of this JVM running the binary without arguments. */
    private Optional<ProcessHandle> waitingHelper() {
        return ProcessHandle.current().children()
                .filter(p -> p.info().command().map(c -> c.equals(sentry.toString())).orElse(false))
                .filter(p -> p.info().arguments().map(a -> a.length == 0).orElse(true))
                .findFirst();
    }

    /** None for half a second on end: a helper whose start was under way at close ends once started. */
    private void awaitNoneWaiting() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long noneSince = System.nanoTime();
        while (System.nanoTime() < deadline && System.nanoTime() - noneSince < TimeUnit.MILLISECONDS.toNanos(500)) {
            if (waitingHelper().isPresent()) noneSince = System.nanoTime();
            Thread.sleep(10);
        }
        assertThat(waitingHelper()).as("a helper left waiting after close").isEmpty();
    }
}

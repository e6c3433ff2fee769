package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checkpoints: sandboxes dumped by CRIU (through runc) into the {@link ImageStore}; and, for the
 * reconciler, the outcome of dumps an earlier run of the service did not live to see.
 */
final class CriuDumps {
    private static final Logger log = LoggerFactory.getLogger(CriuDumps.class);

    private final boolean criuInstalled;
    private final Runc runc;
    private final ImageStore images;
    private final SandboxCgroups cgroups;
    private final Freezer freezer;
    private final SandboxInit init;
    private final StandbyControl standby;
    private final InitConnections connections;

    CriuDumps(boolean criuInstalled, Runc runc, ImageStore images, SandboxCgroups cgroups, Freezer freezer, SandboxInit init,
              StandbyControl standby, InitConnections connections) {
        this.criuInstalled = criuInstalled;
        this.runc = runc;
        this.images = images;
        this.cgroups = cgroups;
        this.freezer = freezer;
        this.init = init;
        this.standby = standby;
        this.connections = connections;
    }

    long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning, Runnable atRest) {
        if (!criuInstalled)
            throw StasisException.runtimeFailed(id.value(), "checkpoint", "no CRIU is configured (install it with ./stasis setup)", null);
        var container = init.requireContainer(id, "checkpoint");
        standby.stopPageOut(id);
        long start = System.nanoTime();
        boolean wasFrozen = freezer.isFrozen(cgroups.path(id));
        Path dir = images.create(image);
        Path work = images.workDir(image, "dump");
        try {
            // CRIU cannot dump a socket whose peer is outside the sandbox: the service lets go of
            // its connections to stasis-init first (exec handles then watch the exit file). A
            // frozen init cannot close its ends: it runs for that moment.
            if (wasFrozen && (connections.anyOpen(id) || HostProcesses.socketCount(container.pid()) > 1)) {
                freezer.thaw(id, cgroups.path(id));
                connections.quiesce(id, container.pid());
            } else if (!wasFrozen) connections.quiesce(id, container.pid());
            // Frozen by us, CRIU does not poll the v1 freezer in 100 ms steps (docs/HOST.md).
            freezer.freeze(id, cgroups.path(id));
            atRest.run();
            runc.checkpoint(id, dir, work, leaveRunning);
        } catch (RuntimeException e) {
            if (CriuLog.dumpFinished(work.resolve("dump.log"))) {
                // runc died (killed) after its CRIU had ended the dump: the image is whole, and
                // without --leave-running CRIU has ended the processes, so undoing would lose them.
                log.atWarn().addKeyValue("sandbox", id).addKeyValue("image", image).addKeyValue("reason", e.getMessage())
                        .log("runc failed after CRIU's dump had finished; keeping the dump");
                return finishCheckpoint(id, image, leaveRunning, wasFrozen, start);
            }
            // read the log before the work directory goes
            Path dumpLog = work.resolve("dump.log");
            var failure = CriuLog.unsupportedState(dumpLog)
                    .<RuntimeException>map(why -> new StasisException(ErrorCode.CHECKPOINT_UNSUPPORTED,
                            "sandbox " + id + " cannot be checkpointed now: " + why, Map.of("sandbox", id.value()), e))
                    .or(() -> CriuLog.diskFull(dumpLog).map(why -> new StasisException(ErrorCode.HOST_BUSY,
                            "the host's disk is full where images are kept (" + dir.getParent() + "): CRIU could not write the image of sandbox "
                                    + id + " (" + why + "); it runs on untouched; free room and try again",
                            Map.of("sandbox", id.value(), "step", "checkpoint"), e)))
                    .orElseGet(() -> CriuLog.withErrors(e, dumpLog));
            images.delete(image);
            if (!wasFrozen && runc.state(id).isPresent()) freezer.thaw(id, cgroups.path(id));
            throw failure;
        }
        return finishCheckpoint(id, image, leaveRunning, wasFrozen, start);
    }

    private long finishCheckpoint(SandboxId id, CheckpointId image, boolean leaveRunning, boolean wasFrozen, long start) {
        if (leaveRunning && !wasFrozen) freezer.thaw(id, cgroups.path(id));
        if (!leaveRunning) forgetContainer(id);
        long size = images.seal(image);
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("image", image).addKeyValue("leaveRunning", leaveRunning)
                .addKeyValue("bytes", size).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("checkpointed");
        return size;
    }

    /** After a dump that ended the container: runc's state is gone; the bundle stays for the restore. */
    private void forgetContainer(SandboxId id) {
        if (runc.state(id).isPresent()) runc.deleteForce(id);
        connections.forget(id);
    }

    int awaitEarlierWork(Duration timeout) {
        return runc.awaitEarlierWork(timeout);
    }

    OptionalLong completeInterruptedDump(CheckpointId image) {
        var sealed = images.completeSize(image);
        if (sealed.isPresent()) return sealed;
        if (!Files.isDirectory(images.dir(image)) || !CriuLog.dumpFinished(images.existingWorkDir(image, "dump").resolve("dump.log")))
            return OptionalLong.empty();
        long size = images.seal(image);
        log.atInfo().addKeyValue("image", image).addKeyValue("bytes", size).log("a dump that ended after the service died is complete; sealed it");
        return OptionalLong.of(size);
    }
}

package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.ProcessEntry;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SpawnSpec;
import io.stasis.core.spi.StreamReader;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What the OCI runtimes here ({@link RuncRuntime}, {@link RunscRuntime}) do the same way, whatever
 * their engine: processes through stasis-init ({@link InitProcesses}), images in the image store
 * ({@link RuncImages}), meters from the sandbox's cgroups ({@link CgroupMeters}). Each runtime names
 * its parts; these methods hand the calls to them.
 */
interface InitRuntime extends SandboxRuntime, AutoCloseable {
    InitProcesses processesPart();

    /** Ends what the runtime runs itself (its output watcher); the sandboxes run on. */
    @Override
    void close();

    RuncImages imagesPart();

    CgroupMeters metersPart();

    @Override
    default ExecHandle spawn(SandboxId id, SpawnSpec spec) {
        return processesPart().spawn(id, spec);
    }

    @Override
    default long startProcess(SandboxId id, String processId, SpawnSpec spec, byte[] label) {
        return processesPart().startProcess(id, processId, spec, label);
    }

    @Override
    default List<ProcessEntry> processes(SandboxId id) {
        return processesPart().processes(id);
    }

    @Override
    default ExecHandle attach(SandboxId id, String processId) {
        return processesPart().attach(id, processId);
    }

    @Override
    default void signal(SandboxId id, long pid, int signal) {
        processesPart().signal(id, pid, signal);
    }

    @Override
    default void writeStdin(SandboxId id, String processId, byte[] data) {
        processesPart().writeStdin(id, processId, data);
    }

    @Override
    default void closeStdin(SandboxId id, String processId) {
        processesPart().closeStdin(id, processId);
    }

    @Override
    default void resizeTerminal(SandboxId id, String processId, SpawnSpec.TerminalSize size) {
        processesPart().resizeTerminal(id, processId, size);
    }

    @Override
    default void forgetProcess(SandboxId id, String processId) {
        processesPart().forgetProcess(id, processId);
    }

    @Override
    default long residentBytes(SandboxId id) {
        return metersPart().residentBytes(id);
    }

    @Override
    default long swappedBytes(SandboxId id) {
        return metersPart().swappedBytes(id);
    }

    @Override
    default long oomKills(SandboxId id) {
        return metersPart().oomKills(id);
    }

    @Override
    default Duration cpuUsage(SandboxId id) {
        return metersPart().cpuUsage(id);
    }

    @Override
    default OptionalLong imageSize(CheckpointId image) {
        return imagesPart().imageSize(image);
    }

    @Override
    default <R> R exportImage(CheckpointId image, StreamReader<R> reader) {
        return imagesPart().exportImage(image, reader);
    }

    @Override
    default long importImage(CheckpointId image, InputStream stream) {
        return imagesPart().importImage(image, stream);
    }

    @Override
    default void deleteImage(CheckpointId image) {
        imagesPart().deleteImage(image);
    }

    @Override
    default Set<CheckpointId> listImages() {
        return imagesPart().listImages();
    }
}

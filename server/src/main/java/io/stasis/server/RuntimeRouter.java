package io.stasis.server;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.ProcessEntry;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SpawnSpec;
import io.stasis.core.spi.StreamReader;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one runtime core sees, over the runtimes this service runs (runc, gVisor): a start or a
 * restore goes to the runtime its spec names, every call about a sandbox to the runtime that
 * started it. Which that is comes from the starts it has routed, and at start-up from what each
 * runtime owns. Images are one store that every runtime reads and writes (the server gives them
 * the same directory), so image calls go to any of them; an image restores only in the runtime
 * that made it, which the checkpoint's record keeps.
 */
final class RuntimeRouter implements SandboxRuntime {
    private final Map<RuntimeKind, SandboxRuntime> runtimes;
    private final RuntimeKind preferred;
    private final Map<SandboxId, RuntimeKind> owners = new ConcurrentHashMap<>();

    /**
     * @param runtimes  the runtimes this service runs
     * @param preferred the runtime of a sandbox none of them owns (asked about after it is gone),
     *                  and whose {@link #canReroot} this answers: the warm pool's
     */
    RuntimeRouter(Map<RuntimeKind, SandboxRuntime> runtimes, RuntimeKind preferred) {
        if (!runtimes.containsKey(preferred)) throw new IllegalArgumentException("no runtime " + preferred + " among " + runtimes.keySet());
        this.runtimes = new EnumMap<>(runtimes);
        this.preferred = preferred;
        for (var entry : this.runtimes.entrySet())
            for (var id : entry.getValue().listOwned()) owners.put(id, entry.getKey());
    }

    /** The runtimes this service runs. */
    Set<RuntimeKind> kinds() {
        return runtimes.keySet();
    }

    private SandboxRuntime of(SandboxId id) {
        return runtimes.get(owners.getOrDefault(id, preferred));
    }

    private SandboxRuntime of(RuntimeSpec spec) {
        var runtime = runtimes.get(spec.runtime());
        if (runtime == null)
            throw StasisException.runtimeFailed(spec.id().value(), "start", "this service does not run " + spec.runtime() + " sandboxes", null);
        return runtime;
    }

    private SandboxRuntime images() {
        return runtimes.get(preferred);
    }

    @Override
    public void create(RuntimeSpec spec) {
        var runtime = of(spec);
        owners.put(spec.id(), spec.runtime());
        try {
            runtime.create(spec);
        } catch (RuntimeException e) {
            owners.remove(spec.id());
            throw e;
        }
    }

    @Override
    public void restore(RuntimeSpec spec, CheckpointId image) {
        var runtime = of(spec);
        owners.put(spec.id(), spec.runtime());
        try {
            runtime.restore(spec, image);
        } catch (RuntimeException e) {
            owners.remove(spec.id());
            throw e;
        }
    }

    @Override
    public boolean canReroot() {
        return runtimes.get(preferred).canReroot();
    }

    @Override
    public void reroot(SandboxId id, Path newRoot) {
        of(id).reroot(id, newRoot);
    }

    @Override
    public void updateResources(SandboxId id, Resources resources) {
        of(id).updateResources(id, resources);
    }

    @Override
    public void foreground(SandboxId id) {
        of(id).foreground(id);
    }

    @Override
    public void freeze(SandboxId id) {
        of(id).freeze(id);
    }

    @Override
    public void thaw(SandboxId id) {
        of(id).thaw(id);
    }

    @Override
    public void standby(SandboxId id) {
        of(id).standby(id);
    }

    @Override
    public long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning) {
        return of(id).checkpoint(id, image, leaveRunning);
    }

    @Override
    public long checkpoint(SandboxId id, CheckpointId image, Runnable atRest) {
        return of(id).checkpoint(id, image, atRest);
    }

    @Override
    public RuntimeStatus status(SandboxId id) {
        return of(id).status(id);
    }

    @Override
    public int awaitEarlierWork(Duration timeout) {
        int still = 0;
        for (var runtime : runtimes.values()) still += runtime.awaitEarlierWork(timeout);
        return still;
    }

    @Override
    public OptionalLong completeInterruptedDump(SandboxId sandbox, CheckpointId image) {
        // Every runtime is asked: the reconciler has destroyed what was left of the sandbox, so none owns it any more.
        for (var runtime : runtimes.values()) {
            var size = runtime.completeInterruptedDump(sandbox, image);
            if (size.isPresent()) return size;
        }
        return OptionalLong.empty();
    }

    @Override
    public void adopt(SandboxId id) {
        of(id).adopt(id);
    }

    @Override
    public void stop(SandboxId id, Duration grace) {
        of(id).stop(id, grace);
        owners.remove(id);
    }

    @Override
    public void destroy(SandboxId id) {
        of(id).destroy(id);
        owners.remove(id);
    }

    @Override
    public Set<SandboxId> listOwned() {
        var all = new HashSet<SandboxId>();
        for (var runtime : runtimes.values()) all.addAll(runtime.listOwned());
        return all;
    }

    @Override
    public Duration startTimeout() {
        return runtimes.values().stream().map(SandboxRuntime::startTimeout).max(Duration::compareTo).orElseThrow();
    }

    @Override
    public ExecHandle spawn(SandboxId id, SpawnSpec spec) {
        return of(id).spawn(id, spec);
    }

    @Override
    public long startProcess(SandboxId id, String processId, SpawnSpec spec, byte[] label) {
        return of(id).startProcess(id, processId, spec, label);
    }

    @Override
    public List<ProcessEntry> processes(SandboxId id) {
        return of(id).processes(id);
    }

    @Override
    public ExecHandle attach(SandboxId id, String processId) {
        return of(id).attach(id, processId);
    }

    @Override
    public void signal(SandboxId id, long pid, int signal) {
        of(id).signal(id, pid, signal);
    }

    @Override
    public void writeStdin(SandboxId id, String processId, byte[] data) {
        of(id).writeStdin(id, processId, data);
    }

    @Override
    public void closeStdin(SandboxId id, String processId) {
        of(id).closeStdin(id, processId);
    }

    @Override
    public void resizeTerminal(SandboxId id, String processId, SpawnSpec.TerminalSize size) {
        of(id).resizeTerminal(id, processId, size);
    }

    @Override
    public void forgetProcess(SandboxId id, String processId) {
        of(id).forgetProcess(id, processId);
    }

    @Override
    public long residentBytes(SandboxId id) {
        return of(id).residentBytes(id);
    }

    @Override
    public long swappedBytes(SandboxId id) {
        return of(id).swappedBytes(id);
    }

    @Override
    public long oomKills(SandboxId id) {
        return of(id).oomKills(id);
    }

    @Override
    public Duration cpuUsage(SandboxId id) {
        return of(id).cpuUsage(id);
    }

    @Override
    public OptionalLong imageSize(CheckpointId image) {
        return images().imageSize(image);
    }

    @Override
    public <R> R exportImage(CheckpointId image, StreamReader<R> reader) {
        return images().exportImage(image, reader);
    }

    @Override
    public long importImage(CheckpointId image, InputStream stream) {
        return images().importImage(image, stream);
    }

    @Override
    public void deleteImage(CheckpointId image) {
        images().deleteImage(image);
    }

    @Override
    public Set<CheckpointId> listImages() {
        return images().listImages();
    }
}

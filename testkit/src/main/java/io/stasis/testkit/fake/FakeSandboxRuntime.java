package io.stasis.testkit.fake;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExitStatus;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.ProcessEntry;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SpawnSpec;
import io.stasis.core.spi.StreamReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A {@link SandboxRuntime} without processes, for fast tests of core: it keeps each sandbox's
 * state (running, frozen, in standby, its spec) and a small "memory" of key-value pairs that
 * checkpoints carry to restores, so a test can tell a fork from a fresh sandbox. Commands end at
 * once with what {@link #onExec} says (exit 0 and no output unless told); background processes run
 * until signalled. Any step can be made to fail once ({@link #failNext}), as the SPI says a real
 * failure leaves things. Passes {@link io.stasis.testkit.RuntimeLifecycleSuite}.
 */
public final class FakeSandboxRuntime implements SandboxRuntime {
    /** The operations a test can make fail or count. */
    public enum Step { CREATE, REROOT, SPAWN, FREEZE, THAW, STANDBY, CHECKPOINT, RESTORE, STOP, DESTROY, UPDATE_RESOURCES, ADOPT }

    /** What a command prints and how it ends. */
    public record Outcome(int exitCode, String stdout, String stderr) {
        public static final Outcome SUCCESS = new Outcome(0, "", "");
    }

    private static final long BASE_RESIDENT = 4L << 20;
    private static final String IMAGE_FORMAT = "stasis-fake-image-1";

    private final Map<SandboxId, Box> sandboxes = new LinkedHashMap<>();
    private final Map<CheckpointId, byte[]> images = new LinkedHashMap<>();
    private final Map<Step, Integer> failures = new EnumMap<>(Step.class);
    private boolean refuseCheckpoints;
    private final Map<Step, Integer> calls = new EnumMap<>(Step.class);
    private Function<SpawnSpec, Outcome> exec = spec -> Outcome.SUCCESS;
    private final Map<Step, Consumer<SandboxId>> observers = new EnumMap<>(Step.class);

    private static final class Box {
        RuntimeSpec spec;
        boolean frozen;
        boolean standby;
        boolean dead;
        long oomKills;
        Duration cpu = Duration.ZERO;
        final Map<String, String> memory = new TreeMap<>();
        final Map<String, Process> processes = new LinkedHashMap<>();
        long nextPid = 2;

        Box(RuntimeSpec spec) {
            this.spec = spec;
        }
    }

    private record Process(String processId, long pid, byte[] label, boolean stdinPipe, CompletableFuture<ExitStatus> exit,
                           ByteArrayOutputStream stdin) {
        ProcessEntry entry() {
            return new ProcessEntry(processId, pid, label, Optional.ofNullable(exit.getNow(null)), false, 0, 0);
        }
    }

    // --- what a test asks of the fake ---

    /** Makes the next {@code step} fail with {@code runtime_failed}, leaving what the SPI says a failure leaves. */
    public synchronized void failNext(Step step) {
        failures.merge(step, 1, Integer::sum);
    }

    /** Makes every checkpoint from now on refused as a real runtime refuses what it cannot dump ({@code checkpoint_unsupported}). */
    public synchronized void refuseCheckpoints() {
        refuseCheckpoints = true;
    }

    /** How many times {@code step} was called, failed calls included. */
    public synchronized int calls(Step step) {
        return calls.getOrDefault(step, 0);
    }

    /** Calls {@code observer} at the start of every {@code step} from now on, with the fake's lock held. */
    public synchronized void onStep(Step step, Consumer<SandboxId> observer) {
        observers.put(step, observer);
    }

    /** The sandboxes whose processes run now: neither frozen nor dead. */
    public synchronized Set<SandboxId> running() {
        return sandboxes.entrySet().stream().filter(e -> !e.getValue().frozen && !e.getValue().dead).map(Map.Entry::getKey)
                .collect(Collectors.toUnmodifiableSet());
    }

    /** What commands spawned from now on do. */
    public synchronized void onExec(Function<SpawnSpec, Outcome> behaviour) {
        this.exec = behaviour;
    }

    /** Puts a value into a sandbox's memory, as a process inside would. */
    public synchronized void remember(SandboxId id, String key, String value) {
        box(id, "remember").memory.put(key, value);
    }

    /** A sandbox's memory now. */
    public synchronized Map<String, String> memory(SandboxId id) {
        return Map.copyOf(box(id, "memory").memory);
    }

    /** The spec a sandbox runs with now (its limits, root, network, mounts). */
    public synchronized Optional<RuntimeSpec> spec(SandboxId id) {
        return Optional.ofNullable(sandboxes.get(id)).map(b -> b.spec);
    }

    /** Whether a sandbox's memory is out of RAM (standby not yet thawed). */
    public synchronized boolean inStandby(SandboxId id) {
        var box = sandboxes.get(id);
        return box != null && box.standby;
    }

    /** Lets a sandbox's processes use CPU, as seen by {@link #cpuUsage}. */
    public synchronized void burnCpu(SandboxId id, Duration time) {
        var box = box(id, "burn");
        box.cpu = box.cpu.plus(time);
    }

    /** Ends a sandbox's process 1 behind the service's back: its state stays, as a dead container's does. */
    public synchronized void killInit(SandboxId id) {
        var box = box(id, "kill");
        box.dead = true;
        box.processes.values().forEach(p -> p.exit.complete(ExitStatus.killed(9)));
    }

    /** Ends the whole sandbox as the host's out-of-memory killer would (gVisor's sentry past its memory limit). */
    public synchronized void killByOutOfMemory(SandboxId id) {
        var box = box(id, "oom");
        box.dead = true;
        box.oomKills++;
        box.processes.values().forEach(p -> p.exit.complete(ExitStatus.killed(9)));
    }

    private void step(Step step, SandboxId id) {
        calls.merge(step, 1, Integer::sum);
        observers.getOrDefault(step, s -> { }).accept(id);
        if (failures.getOrDefault(step, 0) > 0) {
            failures.merge(step, -1, Integer::sum);
            throw StasisException.runtimeFailed(id.value(), step.name().toLowerCase(Locale.ROOT), "failed on purpose (FakeSandboxRuntime)", null);
        }
    }

    private Box box(SandboxId id, String step) {
        var box = sandboxes.get(id);
        if (box == null) throw StasisException.runtimeFailed(id.value(), step, "no such sandbox in the runtime", null);
        return box;
    }

    private Box live(SandboxId id, String step) {
        var box = box(id, step);
        if (box.dead) throw StasisException.runtimeFailed(id.value(), step, "the sandbox's init is not running", null);
        return box;
    }

    // --- SandboxRuntime ---

    @Override
    public synchronized void create(RuntimeSpec spec) {
        step(Step.CREATE, spec.id());
        if (sandboxes.containsKey(spec.id())) throw StasisException.runtimeFailed(spec.id().value(), "create", "the sandbox exists", null);
        sandboxes.put(spec.id(), new Box(spec));
    }

    @Override
    public boolean canReroot() {
        return true;
    }

    @Override
    public synchronized void reroot(SandboxId id, Path newRoot) {
        step(Step.REROOT, id);
        var box = live(id, "reroot");
        var s = box.spec;
        box.spec = new RuntimeSpec(id, newRoot, s.hostname(), s.resources(), s.network(), s.mounts(), s.runtime(), s.background());
    }

    @Override
    public synchronized ExecHandle spawn(SandboxId id, SpawnSpec spec) {
        step(Step.SPAWN, id);
        var box = live(id, "spawn");
        var outcome = exec.apply(spec);
        return new FakeExecHandle(box.nextPid++, outcome.stdout(), outcome.stderr(),
                CompletableFuture.completedFuture(ExitStatus.exited(outcome.exitCode())));
    }

    @Override
    public synchronized long startProcess(SandboxId id, String processId, SpawnSpec spec, byte[] label) {
        step(Step.SPAWN, id);
        var box = live(id, "start process");
        var process = new Process(processId, box.nextPid++, label.clone(), spec.stdinPipe() || spec.terminal().isPresent(),
                new CompletableFuture<>(), new ByteArrayOutputStream());
        box.processes.put(processId, process);
        return process.pid();
    }

    @Override
    public synchronized List<ProcessEntry> processes(SandboxId id) {
        return box(id, "processes").processes.values().stream().map(Process::entry).toList();
    }

    @Override
    public synchronized ExecHandle attach(SandboxId id, String processId) {
        var process = process(id, processId, "attach");
        return new FakeExecHandle(process.pid(), "", "", process.exit());
    }

    private Process process(SandboxId id, String processId, String step) {
        var process = box(id, step).processes.get(processId);
        if (process == null) throw new StasisException(ErrorCode.PROCESS_NOT_FOUND, "no process " + processId, Map.of("sandbox", id.value()));
        return process;
    }

    @Override
    public synchronized void signal(SandboxId id, long pid, int signal) {
        var process = live(id, "signal").processes.values().stream().filter(p -> p.pid() == pid).findFirst();
        if (process.isEmpty() || process.get().exit().isDone())
            throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " has ended", Map.of("pid", pid, "sandbox", id.value()));
        process.get().exit().complete(ExitStatus.killed(signal));
    }

    @Override
    public synchronized void writeStdin(SandboxId id, String processId, byte[] data) {
        var process = process(id, processId, "write stdin");
        if (!process.stdinPipe() || process.exit().isDone())
            throw new StasisException(ErrorCode.INVALID_STATE, "the process's standard input is not open", Map.of("sandbox", id.value()));
        process.stdin().writeBytes(data);
    }

    /** What was written to a background process's standard input. */
    public synchronized byte[] stdinOf(SandboxId id, String processId) {
        return process(id, processId, "stdin").stdin().toByteArray();
    }

    @Override
    public synchronized void closeStdin(SandboxId id, String processId) {
        process(id, processId, "close stdin");
    }

    @Override
    public synchronized void resizeTerminal(SandboxId id, String processId, SpawnSpec.TerminalSize size) {
        process(id, processId, "resize");
    }

    @Override
    public synchronized void forgetProcess(SandboxId id, String processId) {
        box(id, "forget process").processes.remove(processId);
    }

    @Override
    public synchronized void updateResources(SandboxId id, Resources resources) {
        step(Step.UPDATE_RESOURCES, id);
        var box = live(id, "update resources");
        if ((resources.memoryMb() << 20) < resident(box))
            throw StasisException.invalid("memoryMb", "the sandbox uses more memory than " + resources.memoryMb() + " MiB");
        box.spec = box.spec.withResources(resources);
    }

    @Override
    public synchronized void foreground(SandboxId id) {
        var box = live(id, "foreground");
        var s = box.spec;
        box.spec = new RuntimeSpec(id, s.root(), s.hostname(), s.resources(), s.network(), s.mounts(), s.runtime(), false);
    }

    /** Whether the sandbox runs as started in the background, not yet given the usual CPU weight. */
    public synchronized boolean inBackground(SandboxId id) {
        var box = sandboxes.get(id);
        return box != null && box.spec.background();
    }

    @Override
    public synchronized void freeze(SandboxId id) {
        step(Step.FREEZE, id);
        live(id, "freeze").frozen = true;
    }

    @Override
    public synchronized void thaw(SandboxId id) {
        step(Step.THAW, id);
        var box = live(id, "thaw");
        box.frozen = false;
        box.standby = false;
    }

    @Override
    public synchronized void standby(SandboxId id) {
        step(Step.STANDBY, id);
        var box = live(id, "standby");
        box.frozen = true;
        box.standby = true;
    }

    private static long resident(Box box) {
        return BASE_RESIDENT + box.memory.entrySet().stream().mapToLong(e -> e.getKey().length() + e.getValue().length()).sum();
    }

    @Override
    public synchronized long residentBytes(SandboxId id) {
        var box = box(id, "resident");
        return box.standby ? 0 : resident(box);
    }

    @Override
    public synchronized long swappedBytes(SandboxId id) {
        var box = box(id, "swapped");
        return box.standby ? resident(box) : 0;
    }

    @Override
    public synchronized long oomKills(SandboxId id) {
        var box = sandboxes.get(id);
        return box == null ? 0 : box.oomKills;
    }

    @Override
    public long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning) {
        return checkpoint(id, image, leaveRunning, () -> {
        });
    }

    @Override
    public long checkpoint(SandboxId id, CheckpointId image, Runnable atRest) {
        return checkpoint(id, image, true, atRest);
    }

    private synchronized long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning, Runnable atRest) {
        step(Step.CHECKPOINT, id);
        if (refuseCheckpoints)
            throw new StasisException(ErrorCode.CHECKPOINT_UNSUPPORTED, "sandbox " + id + " cannot be checkpointed now (FakeSandboxRuntime)", Map.of());
        var box = live(id, "checkpoint");
        if (images.containsKey(image)) throw StasisException.runtimeFailed(id.value(), "checkpoint", "the image " + image + " exists", null);
        boolean wasFrozen = box.frozen;
        box.frozen = true; // as a real runtime stops the processes for the dump
        try {
            atRest.run();
        } finally {
            box.frozen = wasFrozen;
        }
        byte[] bytes = encode(box);
        images.put(image, bytes);
        if (!leaveRunning) sandboxes.remove(id);
        return bytes.length;
    }

    @Override
    public synchronized void restore(RuntimeSpec spec, CheckpointId image) {
        step(Step.RESTORE, spec.id());
        byte[] bytes = images.get(image);
        if (bytes == null) throw StasisException.runtimeFailed(spec.id().value(), "restore", "the image " + image + " is missing or incomplete", null);
        if (sandboxes.containsKey(spec.id())) throw StasisException.runtimeFailed(spec.id().value(), "restore", "the sandbox exists", null);
        var box = new Box(spec);
        decode(bytes, box);
        sandboxes.put(spec.id(), box);
    }

    @Override
    public synchronized OptionalLong imageSize(CheckpointId image) {
        byte[] bytes = images.get(image);
        return bytes == null ? OptionalLong.empty() : OptionalLong.of(bytes.length);
    }

    @Override
    public <R> R exportImage(CheckpointId image, StreamReader<R> reader) {
        byte[] bytes;
        synchronized (this) {
            bytes = images.get(image);
        }
        if (bytes == null) throw new StasisException(ErrorCode.RUNTIME_FAILED, "export of image " + image + " failed: it is missing", Map.of());
        try {
            return reader.read(new ByteArrayInputStream(bytes));
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "export of image " + image + " failed: " + e.getMessage(), Map.of());
        }
    }

    @Override
    public long importImage(CheckpointId image, InputStream stream) {
        byte[] bytes;
        try {
            bytes = stream.readAllBytes();
            decode(bytes, new Box(null));
        } catch (IOException | UncheckedIOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "import of image " + image + " failed: " + e.getMessage(), Map.of());
        }
        synchronized (this) {
            if (images.putIfAbsent(image, bytes) != null)
                throw new StasisException(ErrorCode.RUNTIME_FAILED, "import of image " + image + " failed: it exists already", Map.of());
        }
        return bytes.length;
    }

    @Override
    public synchronized void deleteImage(CheckpointId image) {
        images.remove(image);
    }

    @Override
    public synchronized Set<CheckpointId> listImages() {
        return Set.copyOf(images.keySet());
    }

    @Override
    public synchronized RuntimeStatus status(SandboxId id) {
        var box = sandboxes.get(id);
        if (box == null) return RuntimeStatus.UNKNOWN;
        if (box.dead) return RuntimeStatus.STOPPED;
        return box.frozen ? RuntimeStatus.FROZEN : RuntimeStatus.RUNNING;
    }

    @Override
    public int awaitEarlierWork(Duration timeout) {
        return 0;
    }

    /** Counted only ({@link #calls}): the fake leaves nothing half done to finish, and an adopt never fails. */
    @Override
    public synchronized void adopt(SandboxId id) {
        calls.merge(Step.ADOPT, 1, Integer::sum);
    }

    @Override
    public synchronized OptionalLong completeInterruptedDump(SandboxId sandbox, CheckpointId image) {
        return imageSize(image);
    }

    @Override
    public synchronized Duration cpuUsage(SandboxId id) {
        return box(id, "cpu").cpu;
    }

    @Override
    public synchronized void stop(SandboxId id, Duration grace) {
        step(Step.STOP, id);
        end(id);
    }

    @Override
    public synchronized void destroy(SandboxId id) {
        step(Step.DESTROY, id);
        end(id);
    }

    private void end(SandboxId id) {
        var box = sandboxes.remove(id);
        if (box != null) box.processes.values().forEach(p -> p.exit().complete(ExitStatus.killed(9)));
    }

    @Override
    public synchronized Set<SandboxId> listOwned() {
        return Set.copyOf(sandboxes.keySet());
    }

    // --- the image: the sandbox's memory and background processes, in a format of the fake's own ---

    private static byte[] encode(Box box) {
        var bytes = new ByteArrayOutputStream();
        try (var out = new DataOutputStream(bytes)) {
            out.writeUTF(IMAGE_FORMAT);
            out.writeInt(box.memory.size());
            for (var e : box.memory.entrySet()) {
                out.writeUTF(e.getKey());
                out.writeUTF(e.getValue());
            }
            out.writeLong(box.nextPid);
            var processes = new ArrayList<>(box.processes.values());
            out.writeInt(processes.size());
            for (var p : processes) {
                out.writeUTF(p.processId());
                out.writeLong(p.pid());
                out.writeInt(p.label().length);
                out.write(p.label());
                out.writeBoolean(p.stdinPipe());
                var exit = Optional.ofNullable(p.exit().getNow(null));
                out.writeInt(exit.map(ExitStatus::exitCode).orElse(-1));
                out.writeUTF(exit.flatMap(ExitStatus::signal).orElse(""));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static void decode(byte[] bytes, Box into) {
        try (var in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            if (!in.readUTF().equals(IMAGE_FORMAT)) throw new IOException("not an image of FakeSandboxRuntime");
            var memory = new HashMap<String, String>();
            for (int n = in.readInt(); n > 0; n--) memory.put(in.readUTF(), in.readUTF());
            into.memory.putAll(memory);
            into.nextPid = in.readLong();
            for (int n = in.readInt(); n > 0; n--) {
                String processId = in.readUTF();
                long pid = in.readLong();
                byte[] label = in.readNBytes(in.readInt());
                boolean stdinPipe = in.readBoolean();
                int code = in.readInt();
                String signal = in.readUTF();
                var exit = new CompletableFuture<ExitStatus>();
                if (code >= 0) exit.complete(new ExitStatus(code, signal.isEmpty() ? Optional.empty() : Optional.of(signal)));
                into.processes.put(processId, new Process(processId, pid, label, stdinPipe, exit, new ByteArrayOutputStream()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

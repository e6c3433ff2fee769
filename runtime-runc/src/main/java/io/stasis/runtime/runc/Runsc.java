package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs gVisor's {@code runsc}: its flags, its state directory and its failures.
 * Every sandbox runs on the systrap platform (the host's /dev/kvm is PVM, on which the KVM platform
 * hangs), with its root as a plain host directory that both sides see at once and write safely
 * ({@code --overlay2=none --file-access=shared}: the default overlay never writes the sandbox's
 * changes to its root, and exclusive access serves the sandbox stale host metadata, which corrupted
 * a file appended to), and with the unix sockets stasis-init binds in its root created on the host
 * ({@code --host-uds=create}), so that the service reaches stasis-init as it does under runc.
 * A networked sandbox runs gVisor's own network stack ({@code --network=sandbox}) on the interfaces
 * of the namespace it starts in; its open connections are dropped when it is saved
 * ({@code --net-disconnect-ok}: runsc otherwise refuses to save a sandbox that has one).
 * A sandbox keeps no host file open that its processes closed ({@code --dcache=0}): the sentry
 * otherwise caches a closed file's dentry with its host descriptors open, so a file deleted
 * through the files API kept its blocks (its disk stayed full), and a bucket's FUSE mount, which
 * uploads a file only at its last close on the host, never uploaded it. The cost: opening files on
 * deep paths is ~10-15% slower.
 * A sandbox is started and restored under {@code stasis-reaper} (src/main/c/stasis-reaper.c), which
 * stays as the parent of the sentry and the gofer once runsc has left them, and reaps them the
 * moment they end: {@code runsc delete} waits for that, and this host's process 1 reaps orphans
 * only every ~2 s (a resume right after a hibernate took 1.9 s instead of 0.2 s).
 */
final class Runsc implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Runsc.class);
    static final List<String> SANDBOX_FLAGS = List.of("--platform=systrap", "--overlay2=none",
            "--file-access=shared", "--host-uds=create", "--net-disconnect-ok");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SANDBOX_INFIX = "_sandbox:";
    private static final String STATE_SUFFIX = ".state";
    private static final String DEBUG_LOG_PREFIX = "debug-";
    /**
     * Where runsc makes a sandbox's control socket when the state root cannot hold it: the first of
     * these in which it can create one (runsc/sandbox, createControlSocket).
     */
    private static final List<Path> CONTROL_SOCKET_FALLBACKS = List.of(Path.of("/var/run"), Path.of("/run"), Path.of("/tmp"));
    /** What the sentry logs at the end of a save (runsc/boot, control.State.Save). */
    private static final String SAVE_SUCCEEDED = "Save succeeded", SAVE_FAILED = "Save failed";

    private final OciCli cli;
    private final Path reaper;
    private final Path sentry;
    /** The calls a checkpoint waits on (hold, save, release), each with one stasis-sentry started ahead. */
    private final HelperAhead sentryAhead;
    private final Duration timeout;

    Runsc(Path binary, Path stateRoot, Path logDir, Duration timeout, Path reaper, Path sentry) {
        this.cli = new OciCli("runsc", binary, stateRoot, logDir, timeout, SANDBOX_FLAGS, Map.of());
        this.reaper = reaper;
        this.sentry = sentry;
        this.sentryAhead = new HelperAhead(sentry);
        this.timeout = timeout;
    }

    /** Ends the stasis-sentry waiting for its call. */
    @Override
    public void close() {
        sentryAhead.close();
    }

    /** runsc's version line, checked at start-up. */
    String version() {
        return cli.run(null, "version", false, Map.of(), "--version").lines().findFirst().orElse("?");
    }

    /**
     * Creates and starts the sandbox in the background, stdio /dev/null (it must not hold a pipe of
     * the service); networked, it takes the interfaces of the network namespace its bundle names, and
     * runsc is started by {@code launcher} (see {@link VethPlug#sysnetMasked}).
     */
    void runDetached(SandboxId id, Path bundle, Path pidFile, Optional<List<String>> networkedLauncher) {
        var args = bootFlags(id, networkedLauncher);
        args.addAll(List.of("run", "--detach", "--bundle", bundle.toString(), "--pid-file", pidFile.toString(), id.value()));
        cli.run(launcher(networkedLauncher), id, "run", true, Map.of(), args.toArray(String[]::new));
    }

    /**
     * The flags of a sandbox's boot (a run or a restore) beyond {@link #SANDBOX_FLAGS}; the logs of
     * an earlier boot of the sandbox are removed first (each boot writes its own, see {@link #sentryLog}),
     * and so is a control socket an earlier runsc left ({@link #removeControlSockets}).
     */
    private List<String> bootFlags(SandboxId id, Optional<List<String>> networkedLauncher) {
        removeControlSockets(id);
        Path logs = cli.logDir(id);
        try (var files = Files.list(logs)) {
            for (Path file : files.filter(f -> f.getFileName().toString().startsWith(DEBUG_LOG_PREFIX)).toList()) Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ArrayList<>(List.of(networkedLauncher.isPresent() ? "--network=sandbox" : "--network=none", "--dcache=0",
                "--debug-log=" + logs.resolve(DEBUG_LOG_PREFIX + "%COMMAND%.log")));
    }

    /**
     * The sentry's own log (at runsc's default level, info: its boot, and ~30 KB per save), which
     * says how each save ended, also when the runsc that asked for it is gone; the boot's flags
     * name it, and the gofer's and runsc's own beside it, one per boot.
     */
    Path sentryLog(SandboxId id) {
        return cli.logDir(id).resolve(DEBUG_LOG_PREFIX + "boot.log");
    }

    /** How the sentry said a save ended: the first such line of {@code sentryLog} past {@code offset}. */
    enum SaveOutcome { SUCCEEDED, FAILED, NOT_SAID }

    /**
     * How the first save after byte {@code offset} of a sentry's log (see {@link #sentryLog}, read
     * by the caller before it asked for the save) ended, as the sentry wrote it.
     */
    static SaveOutcome saveOutcome(Path sentryLog, long offset) {
        try (var channel = FileChannel.open(sentryLog, StandardOpenOption.READ)) {
            if (channel.size() <= offset) return SaveOutcome.NOT_SAID;
            var text = new String(Channels.newInputStream(channel.position(offset)).readAllBytes(), StandardCharsets.UTF_8);
            for (String line : text.lines().toList()) {
                if (line.contains(SAVE_SUCCEEDED)) return SaveOutcome.SUCCEEDED;
                if (line.contains(SAVE_FAILED)) return SaveOutcome.FAILED;
            }
            return SaveOutcome.NOT_SAID;
        } catch (NoSuchFileException e) {
            return SaveOutcome.NOT_SAID;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Saves the sandbox whole (its tasks, memory and the sentry's state) into {@code images}; with
     * {@code leaveRunning} it goes on, else it ends. Its root is not in the image: it stays where it is.
     *
     * <p>{@code stasis-sentry} asks the sentry for the save as {@code runsc checkpoint} does, with
     * the image's files made by it, without the ~45 ms of starting runsc. Uncompressed, as CRIU's
     * images are: runsc's default (flate) spent ~45 ms of a tiny sandbox's ~200 ms save here, and
     * ~30 ms more on each restore, to make 2.8 MB into 0.6 MB. The durable copy is compressed
     * anyway (zstd, per chunk), and chunks of raw pages dedupe.
     */
    void checkpoint(SandboxId id, Path images, boolean leaveRunning) {
        sentryAhead.run(id, "save", List.of("save", controlSocket(id).toString(), images.toString(), leaveRunning ? "resume" : "stop"), timeout);
    }

    /** Starts the sandbox {@code id} of {@code bundle} from an image of {@link #checkpoint}, in the background, as {@link #runDetached}. */
    void restoreDetached(SandboxId id, Path bundle, Path images, Path pidFile, Optional<List<String>> networkedLauncher) {
        var args = bootFlags(id, networkedLauncher);
        args.addAll(List.of("restore", "--detach", "--bundle", bundle.toString(), "--image-path", images.toString(), "--pid-file",
                pidFile.toString(), id.value()));
        cli.run(launcher(networkedLauncher), id, "restore", true, Map.of(), args.toArray(String[]::new));
    }

    /** What a start or a restore runs runsc under: the reaper, then the networked launcher if any. */
    private List<String> launcher(Optional<List<String>> networkedLauncher) {
        var launcher = new ArrayList<>(List.of(reaper.toString()));
        networkedLauncher.ifPresent(launcher::addAll);
        return launcher;
    }

    /**
     * Stops the sandbox's tasks inside the sentry, which runs on and can save them: a checkpoint's
     * files are snapshotted there (a frozen cgroup would stop the sentry too). {@code stasis-sentry}
     * makes the call {@code runsc pause} makes, on the sentry's control socket, in ~1 ms instead of
     * ~45, and creates {@code marker} as soon as the sentry has the call, which it carries out
     * whether or not anyone waits for its answer: what tells the tasks held, for {@link #release}
     * and after a crash or a failed hold, as runsc's state file tells its own pause.
     */
    void hold(SandboxId id, Path marker) {
        sentryAhead.run(id, "hold the tasks", List.of("pause", controlSocket(id).toString(), marker.toString()), timeout);
    }

    /** Runs the tasks {@link #hold} stopped again, removing its marker as soon as the sentry has the call. Only for a marker that is there. */
    void release(SandboxId id, Path marker) {
        sentryAhead.run(id, "release the tasks", List.of("resume", controlSocket(id).toString(), marker.toString()), timeout);
    }

    /** Runs the tasks of a sandbox that {@code runsc pause} stopped (its state file says paused: an earlier version's hold). */
    void resume(SandboxId id) {
        cli.run(id, "resume", false, Map.of(), "resume", id.value());
    }

    /** The sandbox's control socket, as its state file names it (runsc makes it in the state root, or elsewhere if it cannot). */
    private Path controlSocket(SandboxId id) {
        String named = stateNode(id).map(node -> node.path("sandbox").path("controlSocketPath").asText("")).orElse("");
        return named.isEmpty() ? cli.stateRoot().resolve(controlSocketName(id)) : Path.of(named);
    }

    /** The name runsc gives a sandbox's control socket file, wherever it makes it (runsc/sandbox, controlSocketName). */
    private static String controlSocketName(SandboxId id) {
        return "runsc-" + id.value() + ".sock";
    }

    /**
     * Removes the sandbox's control socket files ({@code runsc-<id>.sock}), in the state root and
     * wherever else runsc may have made one; only for a sandbox that has no sentry. runsc's delete
     * leaves the file of a boot whose runsc was killed before it wrote its state, and a file left in
     * the state root has the next boot make its socket in /run instead, which no delete removes:
     * tool kills during starts left such files in /run.
     */
    void removeControlSockets(SandboxId id) {
        String name = controlSocketName(id);
        try {
            Files.deleteIfExists(cli.stateRoot().resolve(name));
            for (Path dir : CONTROL_SOCKET_FALLBACKS) Files.deleteIfExists(dir.resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * See {@link OciCli#awaitEarlierWork}: here a restore or a run goes on after a service that
     * died, and so does a save ({@code stasis-sentry save}, this service's copy, waits for the
     * sentry's answer); both are waited for.
     */
    int awaitEarlierWork(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int runs = cli.awaitEarlierWork(timeout);
        var saves = HostProcesses.running(List.of(sentry.toString(), "save"));
        if (!saves.isEmpty()) log.atInfo().addKeyValue("pids", saves).log("saves of an earlier run are under way; waiting for them to end");
        for (long pid : saves) HostProcesses.awaitEnd(pid, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        return runs + saves.size();
    }

    /** Sends {@code signal} (a name such as TERM or KILL) to the sandbox's process 1. */
    void kill(SandboxId id, String signal) {
        cli.run(id, "kill", false, Map.of(), "kill", id.value(), signal);
    }

    void deleteForce(SandboxId id) {
        cli.run(id, "delete", false, Map.of(), "delete", "--force", id.value());
    }

    /**
     * Whether runsc has state for the sandbox: its state file, {@code <container>_sandbox:<sandbox>.state}
     * (a sandbox here is one container of the same id). No runsc process is started.
     */
    boolean hasState(SandboxId id) {
        return Files.isRegularFile(cli.stateRoot().resolve(stateFileName(id.value())));
    }

    private static String stateFileName(String id) {
        return id + SANDBOX_INFIX + id + STATE_SUFFIX;
    }

    /**
     * The sandbox's state as runsc last wrote it in its state file ({@code status}: created,
     * running, paused or stopped; {@code pid}: the sandbox process), or empty if runsc has none. Read
     * from the file, not asked of {@code runsc state}: that is a process per look, and it hangs
     * while the sandbox's cgroup is frozen. Whether the process still lives is the caller's to check.
     */
    Optional<Runc.ContainerState> state(SandboxId id) {
        return stateNode(id).map(node -> new Runc.ContainerState(node.path("status").asText(), node.path("sandbox").path("pid").asLong()));
    }

    private Optional<JsonNode> stateNode(SandboxId id) {
        Path file = cli.stateRoot().resolve(stateFileName(id.value()));
        for (int attempt = 1; ; attempt++) {
            try {
                return Optional.of(JSON.readTree(Files.readAllBytes(file)));
            } catch (NoSuchFileException e) {
                return Optional.empty();
            } catch (IOException e) {
                // runsc rewrites the file during its own calls: a torn read is read again.
                if (attempt == 3) throw StasisException.runtimeFailed(id.value(), "read runsc state", e.getMessage(), e);
            }
        }
    }

    /** Ids of every sandbox runsc has state for, read from its state files. */
    List<String> list() {
        if (!Files.isDirectory(cli.stateRoot())) return List.of();
        try (var files = Files.list(cli.stateRoot())) {
            return files.map(f -> f.getFileName().toString()).filter(name -> name.endsWith(STATE_SUFFIX) && name.contains(SANDBOX_INFIX))
                    .map(name -> name.substring(0, name.indexOf(SANDBOX_INFIX))).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

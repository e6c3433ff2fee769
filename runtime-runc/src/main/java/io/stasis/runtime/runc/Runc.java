package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs {@code runc} (through {@link OciCli}, which runs runsc too): its flags and
 * verbs, what it leaves in its state directory ({@code --root}) when it dies, and what its failures
 * mean (a key quota used up is the host's limit, not a fault). Public for the benchmark, which
 * measures runc itself as the floor under a sandbox.
 */
public final class Runc {
    private static final Logger log = LoggerFactory.getLogger(Runc.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CRIU_UNDO_WAIT = Duration.ofSeconds(30);

    /** What runc says when a sandbox's session keyring is past the key quota of the user its root maps to. */
    private static final String SESSION_KEY_QUOTA = "unable to create session key: disk quota exceeded";

    private final OciCli cli;

    public Runc(Path binary, Path stateRoot, Path logDir, Duration timeout) {
        this(binary, stateRoot, logDir, timeout, Optional.empty());
    }

    /** @param criu the CRIU binary checkpoints and restores use (runc's own default is an older one) */
    public Runc(Path binary, Path stateRoot, Path logDir, Duration timeout, Optional<Path> criu) {
        this(binary, stateRoot, logDir, timeout, criu, Map.of());
    }

    /** @param criuEnvironment what runc passes on to {@code criu} (runc runs it with its own environment) */
    Runc(Path binary, Path stateRoot, Path logDir, Duration timeout, Optional<Path> criu, Map<String, String> criuEnvironment) {
        this.cli = new OciCli("runc", binary, stateRoot, logDir, timeout,
                criu.map(c -> List.of("--criu", c.toString())).orElse(List.of()), criuEnvironment);
    }

    /** runc's version line, checked at start-up. */
    public String version() {
        return run(null, "version", false, "--version").lines().findFirst().orElse("?");
    }

    /**
     * Creates and starts the container in the background. Its stdio is /dev/null: runc hands its own
     * fds 0-2 to the container, and a pipe to the service would tie the sandbox to it.
     */
    public void runDetached(SandboxId id, Path bundle, Path pidFile) {
        run(id, "run", true, "run", "--detach", "--bundle", bundle.toString(), "--pid-file", pidFile.toString(), id.value());
    }


    /**
     * Dumps the container's processes to {@code images} with CRIU. Established TCP connections
     * inside the sandbox are kept ({@code --tcp-established}); with {@code leaveRunning} the
     * container goes on, else it is gone afterwards.
     */
    public void checkpoint(SandboxId id, Path images, Path work, boolean leaveRunning) {
        var args = new ArrayList<String>(List.of("checkpoint", "--tcp-established", "--image-path", images.toString(),
                "--work-path", work.toString()));
        if (leaveRunning) args.add("--leave-running");
        args.add(id.value());
        try {
            run(id, "checkpoint", false, args.toArray(String[]::new));
        } catch (StasisException e) {
            awaitCriuLeftBy(id, "checkpoint", work);
            throw e;
        }
    }

    /**
     * A runc that failed (killed, timed out) may leave its CRIU running on: CRIU notices only at its
     * next message to runc, then undoes its work, and puts the cgroup freezer back as it found it.
     * The caller's own undo (a thaw) must come after that, or CRIU freezes the sandbox again behind
     * it: a sandbox recorded as running stayed frozen (RandomKillIT, kills of runc). CRIU holds the
     * work directory open; it gets {@link #CRIU_UNDO_WAIT} to end by itself, then SIGKILL.
     */
    private void awaitCriuLeftBy(SandboxId id, String step, Path work) {
        long deadline = System.nanoTime() + CRIU_UNDO_WAIT.toNanos();
        var left = HostProcesses.holding("criu", work);
        if (left.isEmpty()) return;
        log.atWarn().addKeyValue("sandbox", id).addKeyValue("step", step).addKeyValue("criu", left)
                .log("runc failed with its CRIU still at work: waiting for CRIU to undo its work");
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(5_000_000);
            left = left.stream().filter(HostProcesses::isAlive).toList();
        }
        for (long pid : left) {
            log.atWarn().addKeyValue("sandbox", id).addKeyValue("step", step).addKeyValue("criu", pid).log("CRIU did not end: killing it");
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        while (left.stream().anyMatch(HostProcesses::isAlive) && System.nanoTime() < deadline + CRIU_UNDO_WAIT.toNanos())
            LockSupport.parkNanos(5_000_000);
    }

    /**
     * Starts the container {@code id} of {@code bundle} from a CRIU image, in the background.
     * Stdio is /dev/null, as for {@link #runDetached}.
     */
    public void restoreDetached(SandboxId id, Path bundle, Path images, Path work, Path pidFile) {
        try {
            run(id, "restore", true, Map.of(), "restore", "--detach", "--tcp-established", "--image-path", images.toString(),
                    "--work-path", work.toString(), "--bundle", bundle.toString(), "--pid-file", pidFile.toString(), id.value());
        } catch (StasisException e) {
            awaitCriuLeftBy(id, "restore", work);
            throw e;
        }
    }

    /**
     * {@code runc exec} in the foreground, stdio /dev/null: returns when the command has ended;
     * fails unless it exits 0. (The service itself starts processes through stasis-init.)
     */
    public void exec(SandboxId id, String... argv) {
        var args = new ArrayList<String>(List.of("exec", id.value()));
        args.addAll(List.of(argv));
        run(id, "exec", true, args.toArray(String[]::new));
    }

    /** {@code runc pause}: freezes the container (the service writes the freezer itself; the benchmark compares). */
    public void pause(SandboxId id) {
        run(id, "pause", false, "pause", id.value());
    }

    /** {@code runc resume}: the opposite of {@link #pause}. */
    public void resume(SandboxId id) {
        run(id, "resume", false, "resume", id.value());
    }

    public void deleteForce(SandboxId id) {
        run(id, "delete", false, "delete", "--force", id.value());
    }

    /**
     * Removes runc's state of a container whose processes are gone, as runc delete would, and also
     * when runc died before the state was whole (a restore killed midway: no state.json, which runc
     * delete needs, and the bind mount of the root it made for CRIU, criu-root, still there).
     * Nothing happens when there is no such directory.
     */
    void removeState(SandboxId id) {
        Path dir = cli.stateRoot().resolve(id.value());
        if (!Files.isDirectory(dir)) return;
        try {
            // Its caller has unmounted what runc left in it (unmountLeftInState). Never a recursive delete: criu-root is a bind mount of the sandbox's root, and a walk
            // that met it still mounted (or mounted again) would delete the sandbox's files. runc's
            // state is flat: files, and directories that are empty once unmounted (rmdir refuses others).
            try (var entries = Files.list(dir)) {
                for (Path entry : entries.toList()) Files.delete(entry);
            }
            Files.delete(dir);
            log.atDebug().addKeyValue("sandbox", id).log("runc state removed");
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "remove runc's leftover state", e.toString(), e);
        }
    }

    /**
     * Unmounts what a runc that died left mounted in its state directory: a restore binds the
     * sandbox's root there (criu-root) and unmounts it at its end. runc delete removes the directory
     * recursively, and would delete the sandbox's files through it.
     */
    void unmountLeftInState(SandboxId id) {
        Path dir = cli.stateRoot().resolve(id.value());
        if (!Files.isDirectory(dir)) return;
        try {
            if (MountInfo.read().below(dir.toRealPath()).isEmpty()) return;
            var unmounted = Mounts.fromSystem().unmountAllBelow(dir);
            log.atWarn().addKeyValue("sandbox", id).addKeyValue("unmounted", unmounted).log("mounts a runc that died left in its state unmounted");
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "unmount what runc left in its state", e.toString(), e);
        }
    }

    /** Whether runc wrote the container's state.json, without which it knows nothing of the container. */
    boolean hasWholeState(SandboxId id) {
        return Files.isRegularFile(cli.stateRoot().resolve(id.value()).resolve("state.json"));
    }

    /** Whether runc has state for the container (its directory under {@code --root}); no runc process is started. */
    boolean hasState(SandboxId id) {
        return Files.isDirectory(cli.stateRoot().resolve(id.value()));
    }

    /** The container's state, or empty if runc does not know it. */
    public Optional<ContainerState> state(SandboxId id) {
        if (!hasState(id)) return Optional.empty();
        try {
            JsonNode node = JSON.readTree(run(id, "state", false, "state", id.value()));
            return Optional.of(new ContainerState(node.path("status").asText(), node.path("pid").asLong()));
        } catch (StasisException e) {
            if (String.valueOf(e.getMessage()).contains("does not exist")) return Optional.empty();
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** See {@link OciCli#awaitEarlierWork}. */
    int awaitEarlierWork(Duration timeout) {
        return cli.awaitEarlierWork(timeout);
    }

    /** Ids of every container in the state directory. */
    List<String> list() {
        if (!Files.isDirectory(cli.stateRoot())) return List.of();
        try (var dirs = Files.list(cli.stateRoot())) {
            return dirs.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public record ContainerState(String status, long pid) {
        public boolean running() {
            return status.equals("running") || status.equals("paused");
        }
    }

    private String run(SandboxId id, String step, boolean detachedStdio, String... args) {
        return run(id, step, detachedStdio, Map.of(), args);
    }

    private String run(SandboxId id, String step, boolean detachedStdio, Map<String, String> environment, String... args) {
        try {
            return cli.run(id, step, detachedStdio, environment, args);
        } catch (StasisException e) {
            if (!String.valueOf(e.getMessage()).contains(SESSION_KEY_QUOTA)) throw e;
            // A limit of the host, not a fault: every sandbox's session keyring counts against one user's key quota.
            throw new StasisException(ErrorCode.HOST_BUSY, "the host cannot start more sandboxes: the kernel's key "
                    + "quota of the sandboxes' user is used up (raise kernel.keys.maxkeys and kernel.keys.maxbytes, as ./stasis setup does); "
                    + e.getMessage(), Map.of("step", "runc " + step, "sandbox", id == null ? "-" : id.value()), e.getCause());
        }
    }
}

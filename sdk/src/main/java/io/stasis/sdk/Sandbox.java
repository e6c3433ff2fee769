package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A sandbox as last fetched from the server, with methods that act on it. The data is a
 * snapshot ({@link #refresh()} fetches a new one); the methods address the sandbox by id, and
 * those that change its state return the new snapshot.
 *
 * <pre>{@code
 * Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
 * ExecResult r = sandbox.exec("echo", "hello");
 * sandbox.files().write("/root/a.txt", "data");
 * sandbox.delete();
 * }</pre>
 *
 * <h2>Hibernate and resume</h2>
 * Hibernation writes the processes and their memory to disk and frees the memory; resume puts
 * them back where they were. Exec and file calls resume a paused, standby or hibernated sandbox by
 * themselves unless its {@link LifecyclePolicy#autoResume()} is off.
 * <pre>{@code
 * sandbox.exec("sh", "-c", "sleep 1000 >/dev/null 2>&1 &");
 * sandbox = sandbox.hibernate();          // state "hibernated", memory freed
 * System.out.println(sandbox.hibernation().imageBytes() + " bytes on disk");
 * sandbox = sandbox.resume();             // state "running", the sleep is still there
 * }</pre>
 *
 * <h2>Checkpoints and forks</h2>
 * <pre>{@code
 * Checkpoint ready = sandbox.checkpoint("deps-installed", true);   // with memory; keeps running
 * List<Sandbox> tries = sandbox.fork(ForkRequest.builder().checkpoint(ready.id()).count(3).name("try").build());
 * for (Sandbox t : tries) t.exec("sh", "-c", "run-experiment");    // each has its own root and processes
 * Sandbox copy = sandbox.fork().getFirst();                         // one copy of the current state
 * }</pre>
 *
 * <h2>Network</h2>
 * A sandbox reaches only what its {@link NetworkPolicy} allows (by default nothing, unless the
 * operator changed the server's default).
 * <pre>{@code
 * sandbox.updateNetwork(NetworkPolicy.builder().denyByDefault().allow("pypi.org", "*.pythonhosted.org").build());
 * NetworkInfo net = sandbox.network();   // address, gateway, the policy, refused connections
 * }</pre>
 */
public final class Sandbox {
    private final SandboxInfo info;
    private final SandboxCalls calls;

    Sandbox(SandboxInfo info, HttpTransport transport) {
        this.info = info;
        this.calls = new SandboxCalls(transport, info.id());
    }

    /** The wire data. */
    @JsonValue
    public SandboxInfo info() {
        return info;
    }

    public String id() {
        return info.id();
    }

    /** The name, or null. */
    public String name() {
        return info.name();
    }

    public String template() {
        return info.template();
    }

    /** What runs it: {@code runc} or {@code gvisor} (its forks keep it). */
    public String runtime() {
        return info.runtime() == null ? "runc" : info.runtime();
    }

    /** {@code running}, {@code paused}, {@code standby}, {@code hibernated} or {@code stopped} when fetched. */
    public String state() {
        return info.state();
    }

    /** Why it stopped, or null. */
    public String stateReason() {
        return info.stateReason();
    }

    public boolean isRunning() {
        return "running".equals(info.state());
    }

    /** Frozen: memory kept, no CPU used. */
    public boolean isPaused() {
        return "paused".equals(info.state());
    }

    /** Frozen with its memory given back to the host (in swap): no CPU, almost no RAM. */
    public boolean isStandby() {
        return "standby".equals(info.state());
    }

    /** Its processes are in an image on disk ({@link #hibernation()}). */
    public boolean isHibernated() {
        return "hibernated".equals(info.state());
    }

    /** Its processes ended; the root filesystem is kept. */
    public boolean isStopped() {
        return "stopped".equals(info.state());
    }

    /** When hibernated, the process image it resumes from; else null. */
    public Hibernation hibernation() {
        return info.hibernation();
    }

    public Instant createdAt() {
        return info.createdAt();
    }

    public Resources resources() {
        return info.resources();
    }

    public Map<String, String> env() {
        return info.env();
    }

    public Map<String, String> metadata() {
        return info.metadata();
    }

    /** The sandbox it was forked from, or null. */
    public String parentId() {
        return info.parentId();
    }

    /** The checkpoint it was forked from, or null. */
    public String checkpointId() {
        return info.checkpointId();
    }

    /** Its idle policy. */
    public LifecyclePolicy lifecycle() {
        return info.lifecycle();
    }

    /** Runs a command and waits for it: {@code sandbox.exec("sh", "-c", "ls | wc -l")}. */
    public ExecResult exec(String... cmd) {
        return calls.exec(ExecRequest.of(cmd));
    }

    /** Runs a command and waits for it. */
    public ExecResult exec(ExecRequest request) {
        return calls.exec(request);
    }

    /**
     * Runs a command, handing its output to {@code listener} as it arrives (Server-Sent Events),
     * and returns the result at the end (its output kept up to 16 MiB per stream).
     */
    public ExecResult execStream(ExecRequest request, ExecOutputListener listener) {
        return calls.execStream(request, listener);
    }

    /** The sandbox's files. */
    public SandboxFiles files() {
        return new SandboxFiles(calls);
    }

    /** The sandbox's background processes. */
    public Processes processes() {
        return new Processes(calls);
    }

    /** The sandbox's previews: its ports served over HTTP. */
    public Previews previews() {
        return new Previews(calls);
    }

    /** A login shell on a new 80x24 terminal; see {@link #terminal(TerminalRequest)}. */
    public Terminal terminal() {
        return calls.terminal(TerminalRequest.loginShell(), null);
    }

    /**
     * Opens an interactive terminal (WebSocket): a new process on a terminal, or one that already
     * runs. Returns once the process runs.
     *
     * @throws NotFoundException {@code sandbox_not_found}, {@code process_not_found}
     * @throws ConflictException {@code invalid_state} when attaching to a process without a
     *                           terminal, or one that has ended
     */
    public Terminal terminal(TerminalRequest request) {
        return calls.terminal(request, null);
    }

    /** Opens a terminal whose output goes to {@code output} from its first byte. */
    public Terminal terminal(TerminalRequest request, Consumer<byte[]> output) {
        return calls.terminal(request, output);
    }

    /** Fetches the current data. */
    public Sandbox refresh() {
        return wrap(calls.get());
    }

    /**
     * Freezes every process (memory stays, no CPU). A paused sandbox is returned as it is.
     *
     * @throws ConflictException {@code invalid_state} when stopped or hibernated
     */
    public Sandbox pause() {
        return wrap(calls.action("pause"));
    }

    /**
     * Freezes every process and gives its memory back to the host (paged out to swap): no CPU,
     * almost no RAM; {@link #resume()} thaws it in milliseconds, the memory coming back as it is
     * touched. Returns once frozen. One in standby already is returned as it is.
     *
     * @throws ConflictException {@code invalid_state} when stopped or hibernated
     */
    public Sandbox standby() {
        return wrap(calls.action("standby"));
    }

    /** Brings the sandbox to running from any state: thaws, restores from hibernation, or boots a stopped one fresh. */
    public Sandbox resume() {
        return wrap(calls.action("resume"));
    }

    /**
     * {@link #resume()}, unless the sandbox's live state is older than the one this caller saw: pass
     * the {@link #generation()} of the handle it last had. A newer generation resumes (the idle
     * policy may have moved it on meanwhile).
     *
     * @throws ConflictException {@code generation_mismatch} when the sandbox is at an older generation
     *                           (its details say {@code expected} and {@code actual}); nothing changes
     */
    public Sandbox resume(long expectGeneration) {
        return wrap(calls.resume(expectGeneration));
    }

    /**
     * How many times its live state has changed, as of this handle: 1 when made, one more at every
     * state change (pause, standby, resume, hibernate, stop, start, by a call or the idle policy)
     * and every checkpoint or fork of it. It never goes down.
     */
    public long generation() {
        return info.generation();
    }

    /**
     * Its newest durable checkpoint and the digest of what the blob store holds of it, as of this
     * handle (filled by {@link Sandboxes#get} and the resumes); null when not known or none is durable.
     */
    public DurableImage durableImage() {
        return info.durableImage();
    }

    /**
     * Writes the processes to an image on disk and frees their memory; {@link #resume()} restores
     * them where they were.
     *
     * @throws ConflictException {@code invalid_state} when stopped
     */
    public Sandbox hibernate() {
        return wrap(calls.action("hibernate"));
    }

    /** Ends every process (SIGTERM, SIGKILL after 10 s); the root filesystem is kept. */
    public Sandbox stop() {
        return wrap(calls.action("stop"));
    }

    /** Brings the sandbox to running; a stopped one boots a fresh init on the same root. */
    public Sandbox start() {
        return wrap(calls.action("start"));
    }

    /** Changes the named fields of the idle policy; the others keep their values. */
    public Sandbox updateLifecycle(LifecycleUpdate update) {
        return wrap(calls.updateLifecycle(update));
    }

    /**
     * The sandbox's network: its address and the egress policy in force. Does not resume it.
     *
     * @throws NotFoundException {@code sandbox_not_found}
     */
    public NetworkInfo network() {
        return calls.network();
    }

    /**
     * What it uses now: its CPU share since the previous reading, its memory in RAM and in swap.
     * Does not resume it.
     *
     * @throws NotFoundException {@code sandbox_not_found}
     */
    public SandboxMetrics metrics() {
        return calls.metrics();
    }

    /**
     * Replaces the whole egress policy (what {@code policy} leaves out is not kept). New
     * connections and lookups follow it at once; connections already open continue. Emits a
     * {@code network.policy} event.
     *
     * @return the network with the new policy
     * @throws InvalidRequestException {@code invalid_request} naming an entry that is neither a
     *                                 domain nor an IPv4 address or network
     * @throws ConflictException       {@code invalid_state} when the service runs without sandbox
     *                                 networks ({@code --network none})
     */
    public NetworkInfo updateNetwork(NetworkPolicy policy) {
        return calls.updateNetwork(policy);
    }

    /**
     * Takes a checkpoint. With memory it also holds the processes, which keep running (a
     * hibernated sandbox is resumed first); without, it is a snapshot of the root only.
     *
     * @param name a name for it, or null
     * @throws ConflictException {@code invalid_state} for a memory checkpoint of a stopped sandbox
     */
    public Checkpoint checkpoint(String name, boolean memory) {
        return calls.checkpoint(new CheckpointRequest(name, memory));
    }

    /** Takes a checkpoint; see {@link #checkpoint(String, boolean)}. */
    public Checkpoint checkpoint(CheckpointRequest request) {
        return calls.checkpoint(request);
    }

    /** The sandbox's checkpoints, oldest first. */
    public List<Checkpoint> checkpoints() {
        return calls.checkpoints();
    }

    /** One fork of the current state. */
    public List<Sandbox> fork() {
        return calls.fork(ForkRequest.builder().build());
    }

    /**
     * Forks the sandbox: each fork has its own writable root, namespaces and hostname, and, from
     * a memory checkpoint or the current state, the restored processes. All or nothing.
     *
     * @throws NotFoundException {@code checkpoint_not_found}
     */
    public List<Sandbox> fork(ForkRequest request) {
        return calls.fork(request);
    }

    /** The sandboxes forked from this one. */
    public List<Sandbox> forks() {
        return calls.forks();
    }

    /** The first page of this sandbox's events, oldest first; {@link Page#all()} walks them all. */
    public Page<Event> events() {
        return calls.events(null);
    }

    /** This sandbox's events after the one with id {@code eventId}, oldest first. */
    public Page<Event> eventsAfter(long eventId) {
        return calls.events(EventPages.afterId(eventId));
    }

    /**
     * This sandbox's events after {@code afterId} (0: all of them), then each new one as it
     * happens, handed to {@code consumer} in the background; see {@link EventSubscription}.
     *
     * @throws NotFoundException {@code sandbox_not_found}
     */
    public EventSubscription streamEvents(long afterId, Consumer<Event> consumer) {
        return calls.streamEvents(afterId, consumer);
    }

    /** Deletes the sandbox: every process ends, its root filesystem and its checkpoints are removed. */
    public void delete() {
        calls.delete();
    }

    private Sandbox wrap(SandboxInfo fresh) {
        return new Sandbox(fresh, calls.transport());
    }

    @Override
    public String toString() {
        return "Sandbox[" + info.id() + (info.name() == null ? "" : " " + info.name()) + ", " + info.state() + "]";
    }
}

package io.stasis.sdk;

import java.util.List;
import java.util.function.Consumer;

/**
 * The sandbox calls, from {@link StasisClient#sandboxes()}. Wherever an id is asked for, the
 * sandbox's name works too.
 *
 * <pre>{@code
 * Sandboxes sandboxes = client.sandboxes();
 * Sandbox s = sandboxes.create(CreateSandboxRequest.builder().template("tiny").name("a").build());
 * sandboxes.get("a").exec("true");
 * sandboxes.exec("a", ExecRequest.of("ls", "/"));        // without fetching the sandbox first
 * sandboxes.hibernate("a");                               // returns the sandbox in its new state
 * for (Sandbox each : sandboxes.list().all()) System.out.println(each.id());
 * sandboxes.delete("a");
 * }</pre>
 */
public final class Sandboxes {
    private final HttpTransport transport;

    Sandboxes(HttpTransport transport) {
        this.transport = transport;
    }

    /** Creates a sandbox from the default template with default resources. */
    public Sandbox create() {
        return create(CreateSandboxRequest.builder().build());
    }

    /**
     * Creates a sandbox and returns it running.
     *
     * @throws ConflictException           {@code name_taken}
     * @throws InvalidRequestException     {@code invalid_request}, {@code template_not_found}
     * @throws ServiceUnavailableException {@code template_unavailable}
     */
    public Sandbox create(CreateSandboxRequest request) {
        var call = transport.jsonCall("POST", "/v1/sandboxes", request).timeout(transport.operationTimeout());
        return wrap(transport.json(call, SandboxInfo.class));
    }

    /** @throws NotFoundException {@code sandbox_not_found} */
    public Sandbox get(String idOrName) {
        return wrap(new SandboxCalls(transport, idOrName).get());
    }

    /** The first page of all sandboxes, oldest first. */
    public Page<Sandbox> list() {
        return list(ListSandboxesRequest.builder().build());
    }

    public Page<Sandbox> list(ListSandboxesRequest request) {
        Page.Body<SandboxInfo> body = transport.page(
                transport.call("GET", "/v1/sandboxes").query(request.toQuery()), SandboxInfo.class);
        return new Page<>(body.items().stream().map(this::wrap).toList(), body.nextCursor(),
                cursor -> list(request.withCursor(cursor)));
    }

    /** @throws NotFoundException {@code sandbox_not_found} */
    public void delete(String idOrName) {
        new SandboxCalls(transport, idOrName).delete();
    }

    /** Runs a command in the sandbox with this id or name and waits for it. */
    public ExecResult exec(String idOrName, ExecRequest request) {
        return new SandboxCalls(transport, idOrName).exec(request);
    }

    /** Streams a command's output; see {@link Sandbox#execStream(ExecRequest, ExecOutputListener)}. */
    public ExecResult execStream(String idOrName, ExecRequest request, ExecOutputListener listener) {
        return new SandboxCalls(transport, idOrName).execStream(request, listener);
    }

    /** Pauses the sandbox with this id or name; see {@link Sandbox#pause()}. */
    public Sandbox pause(String idOrName) {
        return action(idOrName, "pause");
    }

    /** Resumes the sandbox with this id or name; see {@link Sandbox#resume()}. */
    public Sandbox resume(String idOrName) {
        return action(idOrName, "resume");
    }

    /** Resumes it unless it is at an older generation than {@code expectGeneration}; see {@link Sandbox#resume(long)}. */
    public Sandbox resume(String idOrName, long expectGeneration) {
        return wrap(new SandboxCalls(transport, idOrName).resume(expectGeneration));
    }

    /** Freezes the sandbox and gives its memory back to the host; see {@link Sandbox#standby()}. */
    public Sandbox standby(String idOrName) {
        return action(idOrName, "standby");
    }

    /** Hibernates the sandbox with this id or name; see {@link Sandbox#hibernate()}. */
    public Sandbox hibernate(String idOrName) {
        return action(idOrName, "hibernate");
    }

    /** Stops the sandbox with this id or name; see {@link Sandbox#stop()}. */
    public Sandbox stop(String idOrName) {
        return action(idOrName, "stop");
    }

    /** Starts the sandbox with this id or name; see {@link Sandbox#start()}. */
    public Sandbox start(String idOrName) {
        return action(idOrName, "start");
    }

    /** Changes the named fields of the idle policy; see {@link Sandbox#updateLifecycle}. */
    public Sandbox updateLifecycle(String idOrName, LifecycleUpdate update) {
        return wrap(new SandboxCalls(transport, idOrName).updateLifecycle(update));
    }

    /** What the sandbox with this id or name uses now; see {@link Sandbox#metrics()}. */
    public SandboxMetrics metrics(String idOrName) {
        return new SandboxCalls(transport, idOrName).metrics();
    }

    /** The network of the sandbox with this id or name; see {@link Sandbox#network()}. */
    public NetworkInfo network(String idOrName) {
        return new SandboxCalls(transport, idOrName).network();
    }

    /** Replaces the egress policy of the sandbox with this id or name; see {@link Sandbox#updateNetwork}. */
    public NetworkInfo updateNetwork(String idOrName, NetworkPolicy policy) {
        return new SandboxCalls(transport, idOrName).updateNetwork(policy);
    }

    /** Takes a checkpoint; see {@link Sandbox#checkpoint(String, boolean)}. */
    public Checkpoint checkpoint(String idOrName, CheckpointRequest request) {
        return new SandboxCalls(transport, idOrName).checkpoint(request);
    }

    /** The checkpoints of the sandbox with this id or name, oldest first. */
    public List<Checkpoint> checkpoints(String idOrName) {
        return new SandboxCalls(transport, idOrName).checkpoints();
    }

    /** Forks the sandbox with this id or name; see {@link Sandbox#fork(ForkRequest)}. */
    public List<Sandbox> fork(String idOrName, ForkRequest request) {
        return new SandboxCalls(transport, idOrName).fork(request);
    }

    /** The sandboxes forked from the one with this id or name. */
    public List<Sandbox> forks(String idOrName) {
        return new SandboxCalls(transport, idOrName).forks();
    }

    /** The first page of the events of the sandbox with this id or name, oldest first. */
    public Page<Event> events(String idOrName) {
        return new SandboxCalls(transport, idOrName).events(null);
    }

    /** The events of the sandbox with this id or name after the event {@code eventId}. */
    public Page<Event> eventsAfter(String idOrName, long eventId) {
        return new SandboxCalls(transport, idOrName).events(EventPages.afterId(eventId));
    }

    /** The files of the sandbox with this id or name. */
    public SandboxFiles files(String idOrName) {
        return new SandboxFiles(new SandboxCalls(transport, idOrName));
    }

    /** The background processes of the sandbox with this id or name. */
    public Processes processes(String idOrName) {
        return new Processes(new SandboxCalls(transport, idOrName));
    }

    /** The previews of the sandbox with this id or name; see {@link Sandbox#previews()}. */
    public Previews previews(String idOrName) {
        return new Previews(new SandboxCalls(transport, idOrName));
    }

    /** Opens a terminal in the sandbox with this id or name; see {@link Sandbox#terminal(TerminalRequest)}. */
    public Terminal terminal(String idOrName, TerminalRequest request, Consumer<byte[]> output) {
        return new SandboxCalls(transport, idOrName).terminal(request, output);
    }

    /** Follows the events of the sandbox with this id or name; see {@link Sandbox#streamEvents}. */
    public EventSubscription streamEvents(String idOrName, long afterId, Consumer<Event> consumer) {
        return new SandboxCalls(transport, idOrName).streamEvents(afterId, consumer);
    }

    private Sandbox action(String idOrName, String verb) {
        return wrap(new SandboxCalls(transport, idOrName).action(verb));
    }

    private Sandbox wrap(SandboxInfo info) {
        return new Sandbox(info, transport);
    }
}

package io.stasis.mcp;

import static io.stasis.mcp.JsonSchemas.bool;
import static io.stasis.mcp.JsonSchemas.enumeration;
import static io.stasis.mcp.JsonSchemas.integer;
import static io.stasis.mcp.JsonSchemas.number;
import static io.stasis.mcp.JsonSchemas.object;
import static io.stasis.mcp.JsonSchemas.string;
import static io.stasis.mcp.JsonSchemas.stringArray;
import static io.stasis.mcp.JsonSchemas.stringMap;

import io.stasis.mcp.StasisTool.Kind;
import io.stasis.sdk.Checkpoint;
import io.stasis.sdk.CheckpointRequest;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.EgressPolicy;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ExecResult;
import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.ListSandboxesRequest;
import io.stasis.sdk.NetworkInfo;
import io.stasis.sdk.NetworkPolicy;
import io.stasis.sdk.Preview;
import io.stasis.sdk.PreviewRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import io.stasis.sdk.StasisJson;
import io.stasis.sdk.VolumeMount;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.stream.Collectors;

/** Tools on whole sandboxes: create, list, get, delete, exec, pause, standby, hibernate, resume, checkpoint, fork, preview, network. */
final class SandboxTools {
    static final String SANDBOX_DESCRIPTION = "The sandbox: its id (sbx_...) or its name.";
    /** The default and largest number of characters of each output stream an exec answers with. */
    static final int EXEC_OUTPUT_CHARS = 20_000;
    static final int EXEC_OUTPUT_CHARS_MAX = 200_000;

    private SandboxTools() {
    }

    static List<StasisTool> all() {
        return List.of(create(), list(), get(), delete(), exec(),
                lifecycle("sandbox_pause", "Pause sandbox", "Freezes every process of the sandbox (memory stays, no CPU is used). "
                        + "Instant; any later exec, process or file call resumes it. Answers the sandbox in its new state.",
                        (client, id) -> client.sandboxes().pause(id)),
                lifecycle("sandbox_standby", "Put sandbox in standby", "Freezes every process and gives the sandbox's memory "
                        + "back to the host (no CPU, almost no RAM). Back in milliseconds, everything where it was, on sandbox_resume "
                        + "or automatically on the next exec, process or file call. Answers the sandbox in its new state.",
                        (client, id) -> client.sandboxes().standby(id)),
                lifecycle("sandbox_hibernate", "Hibernate sandbox", "Saves the sandbox's processes and memory to disk and frees "
                        + "its memory. Everything (running programs, open files, shells) continues where it was after sandbox_resume, "
                        + "or automatically on the next exec, process or file call. Answers the sandbox in its new state.",
                        (client, id) -> client.sandboxes().hibernate(id)),
                lifecycle("sandbox_resume", "Resume sandbox", "Brings a paused, standby, hibernated or stopped sandbox back to running "
                        + "(a stopped one boots afresh; its processes are gone). Answers the sandbox in its new state.",
                        (client, id) -> client.sandboxes().resume(id)),
                checkpoint(), fork(), preview(), network());
    }

    private static StasisTool create() {
        var schema = object()
                .optional("template", string("The root filesystem to start from: 'base' (Debian with python3, bash, "
                        + "coreutils; the server's default) or 'tiny' (busybox only, starts fastest). Templates "
                        + "are listed by the API at GET /v1/templates."))
                .optional("name", string("A unique name to address the sandbox by instead of its id: 1-63 of a-z 0-9 . _ -, "
                        + "not starting with sbx_."))
                .optional("runtime", string("What runs the sandbox: 'runc' (a container on the host's kernel) or 'gvisor' "
                        + "(gVisor's user-space kernel in between: a stronger boundary for untrusted code); default: the server's."))
                .optional("env", stringMap("Environment variables for every command run in the sandbox."))
                .optional("metadata", stringMap("Labels to find the sandbox by with sandbox_list."))
                .optional("cpus", number("CPU limit in cores (default 1).", 0.1, 64))
                .optional("memoryMb", integer("Memory limit in MB (default 1024).", 16, 1_048_576))
                .optional("diskMb", integer("Room in MB for what the sandbox writes itself, the template's files not "
                        + "counted (default 10240); writes past it fail with 'Disk quota exceeded' until files it wrote are deleted.", 64, 16_777_216))
                .optional("allowInternet", bool("true: the sandbox may connect anywhere on the internet (egress "
                        + "default allow); false or absent: the server's default network policy (usually no egress). "
                        + "network_set changes it later in detail."))
                .optional("volumes", stringArray("Volumes (files that outlive sandboxes, made with the API's POST /v1/volumes) "
                        + "to mount, each 'VOLUME:/path' or 'VOLUME:/path:ro' for read-only, e.g. 'datasets:/data:ro'."))
                .optional("fromCheckpoint", string("A checkpoint id (ckpt_...) to make the sandbox from, with its files and, "
                        + "if it has memory, its processes: one of this server's, or a durable one written by any server "
                        + "sharing its blob store. Only 'name' may be given with it."))
                .build();
        return new StasisTool("sandbox_create", "Create sandbox",
                "Creates a new isolated Linux sandbox (its own filesystem, processes and network) and waits until it "
                        + "runs. Answers its id: pass it (or its name) as 'sandbox' to the other tools. A sandbox keeps "
                        + "its files and processes until sandbox_delete; idle ones are paused and hibernated automatically "
                        + "and wake on the next call.",
                schema, Kind.CHANGE, (client, args) -> {
                    String from = args.optString("fromCheckpoint");
                    if (from != null) {
                        Sandbox restored = client.sandboxes().create(CreateSandboxRequest.fromCheckpoint(from, args.optString("name")));
                        return ToolResult.of("created " + Texts.sandbox(restored) + " from " + from, restored);
                    }
                    var request = CreateSandboxRequest.builder().template(args.optString("template")).name(args.optString("name"))
                            .env(args.stringMap("env")).metadata(args.stringMap("metadata")).runtime(args.optString("runtime"));
                    Double cpus = args.optNumber("cpus", 0.1, 64);
                    if (cpus != null) request.cpus(cpus);
                    if (args.has("memoryMb")) request.memoryMb((int) args.integer("memoryMb", 0, 16, 1_048_576));
                    if (args.has("diskMb")) request.diskMb((int) args.integer("diskMb", 0, 64, 16_777_216));
                    if (args.bool("allowInternet", false)) request.network(NetworkPolicy.allowAll());
                    for (String volume : args.strings("volumes")) request.volume(volumeMount(volume));
                    Sandbox sandbox = client.sandboxes().create(request.build());
                    return ToolResult.of("created " + Texts.sandbox(sandbox), sandbox);
                });
    }

    /** {@code VOLUME:/path} or {@code VOLUME:/path:ro}, as the CLI's {@code --volume}; the server checks the name and the path. */
    private static VolumeMount volumeMount(String text) {
        try {
            return VolumeMount.parse(text);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentsException("'volumes' entries are 'VOLUME:/path' or 'VOLUME:/path:ro', not '" + text + "'");
        }
    }

    private static StasisTool list() {
        var schema = object()
                .optional("state", enumeration("Only sandboxes in this state.", "running", "paused", "standby", "hibernated", "stopped"))
                .optional("metadata", stringMap("Only sandboxes with all these metadata labels."))
                .optional("limit", integer("At most this many (default 100), oldest first.", 1, 1000))
                .build();
        return new StasisTool("sandbox_list", "List sandboxes", "Lists the sandboxes this API key can see, oldest first, "
                + "one line each: id, name, state, template.", schema, Kind.READ, (client, args) -> {
                    var request = ListSandboxesRequest.builder().limit((int) args.integer("limit", 100, 1, 1000));
                    if (args.has("state")) request.state(args.choice("state", null, "running", "paused", "standby", "hibernated", "stopped"));
                    args.stringMap("metadata").forEach(request::metadata);
                    var page = client.sandboxes().list(request.build());
                    List<Sandbox> items = page.items();
                    String text = items.isEmpty() ? "no sandboxes"
                            : items.stream().map(Texts::sandbox).collect(Collectors.joining("\n"));
                    if (page.hasNextPage()) text += "\n(more: raise 'limit' or filter by state or metadata)";
                    return ToolResult.list(text, items);
                });
    }

    private static StasisTool get() {
        return new StasisTool("sandbox_get", "Get sandbox", "Describes one sandbox: state, template, resources, "
                + "environment, metadata, idle policy. Does not wake a paused, standby or hibernated sandbox.",
                sandboxOnly(), Kind.READ, (client, args) -> {
                    Sandbox sandbox = client.sandboxes().get(args.string("sandbox"));
                    return ToolResult.of(Texts.sandbox(sandbox) + "\n" + StasisJson.write(sandbox), sandbox);
                });
    }

    private static StasisTool delete() {
        return new StasisTool("sandbox_delete", "Delete sandbox", "Deletes a sandbox for good: ends its processes and "
                + "removes its files and checkpoints. Forks made from it are kept.",
                sandboxOnly(), Kind.DESTRUCTIVE, (client, args) -> {
                    String id = args.string("sandbox");
                    client.sandboxes().delete(id);
                    return ToolResult.text("deleted " + id);
                });
    }

    private static StasisTool exec() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .optional("command", string("A shell command line, run with sh -c: pipes, redirections, && and "
                        + "variables work. Give this or 'argv'."))
                .optional("argv", stringArray("The program and its arguments, run without a shell (argv[0] is searched "
                        + "in PATH). Give this or 'command'."))
                .optional("cwd", string("Working directory (default /root)."))
                .optional("env", stringMap("Extra environment variables for this command."))
                .optional("stdin", string("Text fed to the command's standard input (then end of file)."))
                .optional("timeoutSeconds", integer("Kill the command (and everything it started) after this many "
                        + "seconds (default 60). Start long-running programs such as servers with process_start instead.",
                        1, 86_400))
                .optional("maxOutputChars", integer("At most this many characters of stdout and of stderr in the "
                        + "answer (default " + EXEC_OUTPUT_CHARS + "); the middle of a longer output is left out.",
                        100, EXEC_OUTPUT_CHARS_MAX))
                .build();
        return new StasisTool("sandbox_exec", "Run a command", "Runs a command in the sandbox, waits for it to end "
                + "and answers its exit code, stdout and stderr. Wakes a paused or hibernated sandbox. For commands "
                + "that run on (servers, watchers) use process_start.", schema, Kind.CHANGE, (client, args) -> {
                    var request = ExecRequest.builder(commandLine(args)).cwd(args.optString("cwd")).env(args.stringMap("env"))
                            .timeout(Duration.ofSeconds(args.integer("timeoutSeconds", 60, 1, 86_400)));
                    if (args.has("stdin")) request.stdin(args.optString("stdin"));
                    int limit = (int) args.integer("maxOutputChars", EXEC_OUTPUT_CHARS, 100, EXEC_OUTPUT_CHARS_MAX);
                    ExecResult result = client.sandboxes().exec(args.string("sandbox"), request.build());
                    return ToolResult.structured(execText(result, limit), execJson(result, limit));
                });
    }

    /** The argv of {@code command} (through sh -c) or {@code argv}: exactly one of them. */
    static List<String> commandLine(ToolArguments args) {
        String command = args.optString("command");
        List<String> argv = args.strings("argv");
        if (command != null && !argv.isEmpty())
            throw new InvalidArgumentsException("give either 'command' (a shell command line) or 'argv', not both");
        if (command != null && !command.isBlank()) return List.of("sh", "-c", command);
        if (!argv.isEmpty()) return argv;
        throw new InvalidArgumentsException("'command' (a shell command line) or 'argv' is required");
    }

    static String execText(ExecResult r, int limit) {
        var text = new StringBuilder();
        if (r.timedOut()) text.append("timed out and killed");
        else text.append("exit code ").append(r.exitCode());
        if (r.signal() != null) text.append(" (signal ").append(r.signal()).append(')');
        text.append(", ").append(r.duration().toMillis()).append(" ms\n");
        String hint = "redirect the output to a file and read parts of it with file_read";
        text.append("--- stdout ---\n").append(Texts.bounded(r.stdout(), limit, hint));
        if (r.stdoutTruncated()) text.append("\n[stdout was cut by the server's output limit]");
        if (!r.stderr().isEmpty() || r.stderrTruncated()) {
            text.append("\n--- stderr ---\n").append(Texts.bounded(r.stderr(), limit, hint));
            if (r.stderrTruncated()) text.append("\n[stderr was cut by the server's output limit]");
        }
        return text.toString();
    }

    private static Map<String, Object> execJson(ExecResult r, int limit) {
        var json = new LinkedHashMap<String, Object>();
        json.put("exitCode", r.exitCode());
        json.put("signal", r.signal());
        json.put("timedOut", r.timedOut());
        json.put("durationMs", r.duration().toMillis());
        json.put("stdout", Texts.bounded(r.stdout(), limit, "omitted"));
        json.put("stderr", Texts.bounded(r.stderr(), limit, "omitted"));
        json.put("stdoutTruncated", r.stdoutTruncated() || r.stdout().length() > limit);
        json.put("stderrTruncated", r.stderrTruncated() || r.stderr().length() > limit);
        return json;
    }

    private static StasisTool lifecycle(String name, String title, String description,
                                        BiFunction<StasisClient, String, Sandbox> action) {
        return new StasisTool(name, title, description, sandboxOnly(), Kind.IDEMPOTENT, (client, args) -> {
            Sandbox sandbox = action.apply(client, args.string("sandbox"));
            return ToolResult.of(Texts.sandbox(sandbox), sandbox);
        });
    }

    private static StasisTool checkpoint() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .optional("name", string("A label for the checkpoint."))
                .optional("memory", bool("true (default): also save the running processes and their memory, so a "
                        + "fork continues them; false: files only (a fork boots fresh on them)."))
                .optional("durable", bool("true: answer only once the checkpoint is in the durable store, restorable on "
                        + "another server sharing it (sandbox_create with fromCheckpoint); false (default): uploaded in the background."))
                .optional("spares", integer("With memory: forks of it to keep restored ahead, frozen, so that sandbox_fork from "
                        + "it takes milliseconds instead of a restore (default 0; each holds a running sandbox of quota).", 0, 100))
                .build();
        return new StasisTool("checkpoint_create", "Checkpoint sandbox", "Takes a checkpoint of the sandbox while it "
                + "keeps running: its files and, by default, its processes and memory. sandbox_fork makes new sandboxes "
                + "from it. Answers the checkpoint id (ckpt_...).", schema, Kind.CHANGE, (client, args) -> {
                    var request = new CheckpointRequest(args.optString("name"), args.bool("memory", true),
                            args.bool("durable", false) ? Boolean.TRUE : null, spares(args));
                    Checkpoint checkpoint = client.sandboxes().checkpoint(args.string("sandbox"), request);
                    return ToolResult.of("checkpoint " + checkpoint.id() + (checkpoint.name() == null ? "" : " \"" + checkpoint.name() + "\"")
                            + " of " + checkpoint.sandboxId() + (checkpoint.hasMemory() ? ", with memory, " : ", files only, ")
                            + checkpoint.sizeBytes() + " bytes" + (checkpoint.durable() ? ", durable" : ""), checkpoint);
                });
    }

    private static Integer spares(ToolArguments args) {
        int spares = (int) args.integer("spares", 0, 0, 100);
        return spares == 0 ? null : spares;
    }

    private static StasisTool fork() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .optional("checkpoint", string("Fork from this checkpoint (ckpt_...) of the sandbox; without it, "
                        + "from the sandbox as it is now."))
                .optional("count", integer("How many copies (default 1).", 1, 100))
                .optional("name", string("Name of the fork; several get name-1, name-2, ..."))
                .build();
        return new StasisTool("sandbox_fork", "Fork sandbox", "Makes independent copies of a sandbox: each gets the "
                + "files, and the running processes with their memory, as they were (now or at a checkpoint), and "
                + "continues on its own. Use it to try several approaches from one state. Answers the new sandboxes.",
                schema, Kind.CHANGE, (client, args) -> {
                    var request = new ForkRequest(args.optString("checkpoint"),
                            args.has("count") ? (int) args.integer("count", 1, 1, 100) : null, args.optString("name"));
                    List<Sandbox> forks = client.sandboxes().fork(args.string("sandbox"), request);
                    return ToolResult.list("forked " + forks.size() + ":\n"
                            + forks.stream().map(Texts::sandbox).collect(Collectors.joining("\n")), forks);
                });
    }

    private static StasisTool preview() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("port", integer("The TCP port a server listens on inside the sandbox.", 1, 65_535))
                .optional("public", bool("true: anyone with the URL may open it; false (default): a token is needed."))
                .optional("ttlSeconds", integer("The URL stops working after this many seconds (default: never).", 1, 2_592_000))
                .build();
        return new StasisTool("preview_create", "Create preview URL", "Makes a port of the sandbox reachable over HTTP "
                + "(web apps, APIs, WebSockets) and answers its URLs. A private preview also answers a token, shown "
                + "only now: open 'link' in a browser, or send the header X-Stasis-Preview-Token.",
                schema, Kind.CHANGE, (client, args) -> {
                    var request = PreviewRequest.builder((int) args.requiredInteger("port", 1, 65_535))
                            .isPublic(args.bool("public", false));
                    if (args.has("ttlSeconds")) request.ttl(Duration.ofSeconds(args.integer("ttlSeconds", 0, 1, 2_592_000)));
                    Preview preview = client.sandboxes().previews(args.string("sandbox")).create(request.build());
                    var text = new StringBuilder("preview ").append(preview.id()).append(" of port ").append(preview.port())
                            .append(preview.isPublic() ? " (public)" : " (private)").append("\nurl: ").append(preview.url())
                            .append("\npathUrl: ").append(preview.pathUrl());
                    if (preview.token() != null) {
                        text.append("\ntoken: ").append(preview.token()).append("\nlink: ").append(preview.linkWithToken());
                    }
                    if (preview.expiresAt() != null) text.append("\nexpires: ").append(preview.expiresAt());
                    return ToolResult.of(text.toString(), preview);
                });
    }

    private static StasisTool network() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("default", enumeration("What the sandbox may reach when no entry matches.", "allow", "deny"))
                .optional("allow", stringArray("Allowed destinations: domains ('pypi.org'), wildcards "
                        + "('*.pythonhosted.org'), IPv4 addresses or CIDRs."))
                .optional("deny", stringArray("Denied destinations, same forms; deny wins over allow."))
                .build();
        return new StasisTool("network_set", "Set network policy", "Replaces the sandbox's egress policy: which "
                + "internet destinations its programs may connect to. Applies at once to new connections. Header rules "
                + "set through the API are kept. Answers the network with the new policy.",
                schema, Kind.IDEMPOTENT, (client, args) -> {
                    String id = args.string("sandbox");
                    var action = EgressPolicy.Action.fromWire(args.choice("default", null, "allow", "deny"));
                    NetworkInfo current = client.sandboxes().network(id);
                    var policy = NetworkPolicy.builder().defaultAction(action).allow(args.strings("allow"))
                            .deny(args.strings("deny")).rules(current.rules()).build();
                    NetworkInfo updated = client.sandboxes().updateNetwork(id, policy);
                    var egress = updated.egress();
                    return ToolResult.of("network of " + id + ": default " + egress.defaultAction().wireName()
                            + ", allow " + egress.allow() + ", deny " + egress.deny()
                            + (updated.address() == null ? "" : ", address " + updated.address()), updated);
                });
    }

    static Map<String, Object> sandboxOnly() {
        return object().required("sandbox", string(SANDBOX_DESCRIPTION)).build();
    }
}

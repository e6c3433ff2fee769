package io.stasis.cli;

import io.stasis.sdk.StasisClient;
import io.stasis.sdk.StasisJson;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The top-level {@code stasis} command: global options and the connection they describe.
 * Subcommands reach it through {@code @ParentCommand}.
 */
@Command(name = "stasis",
        mixinStandardHelpOptions = true,
        version = "stasis 0.1.0",
        description = "Manage Stasis sandboxes: persistent, isolated Linux environments for AI agents.",
        footerHeading = "%nExamples:%n",
        footer = {
                "  id=$(stasis create --template tiny --name demo)",
                "  stasis exec demo -- sh -c 'echo hello; uname -a'",
                "  stasis cp ./app.py demo:/root/app.py",
                "  stasis files ls demo /root",
                "  stasis exec --timeout 2m demo -- python3 /root/app.py",
                "  stasis shell demo                                # a login shell; exit or Ctrl-D to leave",
                "  stasis exec -it demo -- python3                  # any program on a terminal",
                "  pid=$(stasis spawn demo --tag web -- python3 -m http.server 8000)",
                "  stasis ps demo && stasis logs -f demo $pid",
                "  stasis kill demo $pid && stasis wait demo $pid",
                "  stasis watch demo /root -r                       # create /root/a.txt, modify /root/a.txt, ...",
                "  stasis standby demo && stasis resume demo       # memory given back to the host, then back in ms",
                "  stasis hibernate demo && stasis resume demo     # processes kept on disk, then back",
                "  ckpt=$(stasis checkpoint demo --name ready)",
                "  stasis fork demo --checkpoint $ckpt --count 3 --name try",
                "  stasis lifecycle demo --pause-after 1m --stop-after never",
                "  stasis events demo --follow",
                "  stasis preview create demo 8000                  # URLs of port 8000, and its token",
                "  stasis network set demo --allow pypi.org         # replaces the whole egress policy",
                "  stasis template build web -f Dockerfile --context # a template of your own; then create --template web",
                "  stasis mcp                                       # MCP server on stdio, for agent hosts",
                "  stasis rm demo",
                "  source <(stasis completion bash)                 # tab completion (zsh: completion zsh)"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                ExitCodes.OK + ":success",
                ExitCodes.ERROR + ":another failure: a local file error, or an error the codes below do not cover",
                ExitCodes.USAGE + ":usage error: bad arguments, or no API key",
                ExitCodes.CANNOT_CONNECT + ":cannot connect to the server (or it did not answer in time)",
                ExitCodes.NOT_FOUND + ":not found: no such sandbox, checkpoint, process, file, preview or secret",
                ExitCodes.CONFLICT + ":conflict: the sandbox is in the wrong state, or the name or path is taken",
                ExitCodes.INVALID_REQUEST + ":invalid request: the server rejected the arguments (400, 413, 422)",
                ExitCodes.UNAUTHORIZED + ":unauthorized: the API key is wrong or lacks the permission",
                ExitCodes.BUSY + ":busy: a quota is used up or the host is busy; try again later",
                ExitCodes.SERVER_FAILED + ":the server failed (runtime_failed, internal)",
                "N:exec, shell, logs -f, wait: the command's own exit code (128+N when killed by signal N)",
                ExitCodes.TIMED_OUT + ":exec: the command timed out; wait: it still runs at --timeout"})
final class StasisCommand implements Callable<Integer>, AutoCloseable {
    /**
     * The verbs, in the order the usage lists them. Not in the {@code @Command} annotation: picocli
     * builds a verb's model by reflection, about half a second for all of them on a cold JVM, so
     * {@link Subcommands} adds only the one a command line names (all of them for help).
     */
    static final List<Class<?>> SUBCOMMANDS = List.of(CreateCommand.class, ListCommand.class, InfoCommand.class, ExecCommand.class,
            ShellCommand.class, SpawnCommand.class, PsCommand.class, LogsCommand.class, KillCommand.class, ForgetCommand.class,
            WaitCommand.class, RmCommand.class, CpCommand.class, WatchCommand.class, TemplatesCommand.class, TemplateCommand.class,
            PauseCommand.class, StandbyCommand.class, ResumeCommand.class, HibernateCommand.class, StopCommand.class,
            StartCommand.class, LifecycleCommand.class,
            CheckpointCommand.class, CheckpointsCommand.class, CheckpointInfoCommand.class, RmCheckpointCommand.class,
            ForkCommand.class, ForksCommand.class, FilesCommand.class,
            EventsCommand.class, PreviewCommand.class, SecretCommand.class, VolumeCommand.class, NetworkCommand.class, McpCommand.class,
            TenantCommand.class, TokenCommand.class, BlobsCommand.class,
            HealthCommand.class, MetricsCommand.class, OpenApiCommand.class, CompletionCommand.class);

    static final String DEFAULT_URL = "http://127.0.0.1:7070";
    static final String DEFAULT_DATA_DIR = "/var/lib/stasis";

    private final CliIo io;
    private StasisClient client;

    @Spec
    CommandSpec spec;

    @Option(names = "--url", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "Server URL (default: $STASIS_URL, else " + DEFAULT_URL + ").")
    String url;

    @Option(names = "--api-key", scope = ScopeType.INHERIT, paramLabel = "KEY",
            description = "API key (default: $STASIS_API_KEY, else the content of <data-dir>/root.key).")
    String apiKey;

    @Option(names = "--data-dir", scope = ScopeType.INHERIT, paramLabel = "DIR",
            description = "The server's data directory, where root.key is read from "
                    + "(default: $STASIS_DATA_DIR, else " + DEFAULT_DATA_DIR + ").")
    Path dataDir;

    @Option(names = "--json", scope = ScopeType.INHERIT,
            description = "Print the API's JSON instead of tables.")
    boolean json;

    StasisCommand(CliIo io) {
        this.io = io;
    }

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    CliIo io() {
        return io;
    }

    boolean json() {
        return json;
    }

    /** Prints a wire object as JSON on stdout. */
    void printJson(Object value) {
        io.out().println(StasisJson.write(value));
    }

    /** What a command that shows one thing prints: with --json the object, else {@code text} (lines ending in a newline). */
    int print(Object value, Supplier<String> text) {
        if (json) {
            printJson(value);
        } else {
            io.out().print(text.get());
        }
        return ExitCodes.OK;
    }

    /**
     * Prints a document the server sends in a format of its own, which --json cannot change:
     * with --json, a usage error ("--json does not apply: {@code why}") before any call.
     */
    void printVerbatim(String why, Supplier<String> fetch) {
        if (json) throw new UsageException("--json does not apply: " + why);
        String document = fetch.get();
        io.out().print(document.isEmpty() || document.endsWith("\n") ? document : document + "\n");
    }

    /** What a command that lists things prints: with --json {@code {"items": [...]}} as the API pages are, else the table. */
    <T> int printList(List<T> items, Function<List<T>, String> table) {
        if (json) {
            io.out().println(StasisJson.writeList(items));
        } else {
            io.out().print(table.apply(items));
        }
        return ExitCodes.OK;
    }

    /** The client for the configured server, created on first use. */
    StasisClient client() {
        return client(true);
    }

    /**
     * The client; {@code keyRequired} false for the calls the server answers without a key
     * (health, metrics, the OpenAPI spec): then a missing key is no error.
     */
    StasisClient client(boolean keyRequired) {
        if (client == null) {
            String target = url != null ? url : orDefault(io.env("STASIS_URL"), DEFAULT_URL);
            String key = resolveApiKey(keyRequired);
            try {
                client = StasisClient.builder().url(target).apiKey(key).build();
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        return client;
    }

    /** The key, or (when not required) null if there is none. */
    private String resolveApiKey(boolean required) {
        if (apiKey != null && !apiKey.isBlank()) return apiKey.strip();
        String fromEnv = io.env("STASIS_API_KEY");
        if (fromEnv != null) return fromEnv.strip();
        Path dir = dataDir != null ? io.local(dataDir) : Path.of(orDefault(io.env("STASIS_DATA_DIR"), DEFAULT_DATA_DIR));
        Path keyFile = dir.resolve("root.key");
        String problem;
        try {
            String key = Files.readString(keyFile).strip();
            if (!key.isEmpty()) return key;
            problem = "it is empty";
        } catch (NoSuchFileException e) {
            problem = "it does not exist";
        } catch (AccessDeniedException e) {
            problem = "permission denied";
        } catch (IOException e) {
            problem = e.getMessage();
        }
        if (!required) return null;
        throw new UsageException("no API key: pass --api-key, set STASIS_API_KEY, or make " + keyFile
                + " readable (" + problem + ")");
    }

    private static String orDefault(String value, String fallback) {
        return value != null ? value : fallback;
    }

    @Override
    public void close() {
        if (client != null) client.close();
    }
}

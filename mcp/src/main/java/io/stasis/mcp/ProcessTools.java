package io.stasis.mcp;

import static io.stasis.mcp.JsonSchemas.bool;
import static io.stasis.mcp.JsonSchemas.enumeration;
import static io.stasis.mcp.JsonSchemas.integer;
import static io.stasis.mcp.JsonSchemas.object;
import static io.stasis.mcp.JsonSchemas.string;
import static io.stasis.mcp.JsonSchemas.stringArray;
import static io.stasis.mcp.JsonSchemas.stringMap;
import static io.stasis.mcp.SandboxTools.SANDBOX_DESCRIPTION;

import io.stasis.mcp.StasisTool.Kind;
import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.ProcessInfo;
import io.stasis.sdk.ProcessOutput;
import io.stasis.sdk.ProcessRequest;
import io.stasis.sdk.StasisClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Tools on background processes: start, list, read output from an offset, write stdin, signal. */
final class ProcessTools {
    static final String PID_DESCRIPTION = "The process's pid, as process_start answered it.";
    static final int OUTPUT_BYTES = 20_000;
    static final int OUTPUT_BYTES_MAX = 1 << 20;
    static final String[] SIGNALS = {"TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT"};

    private ProcessTools() {
    }

    static List<StasisTool> all() {
        return List.of(start(), list(), output(), stdin(), signal());
    }

    private static StasisTool start() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .optional("command", string("A shell command line, run with sh -c. Give this or 'argv'."))
                .optional("argv", stringArray("The program and its arguments, without a shell. Give this or 'command'."))
                .optional("cwd", string("Working directory (default /root)."))
                .optional("env", stringMap("Extra environment variables."))
                .optional("tag", string("A label shown by process_list."))
                .optional("stdin", bool("true: keep its standard input open for process_stdin (for REPLs, "
                        + "interactive programs); false (default): it reads end of file."))
                .optional("keepAwake", bool("true: while it runs the sandbox is not paused or hibernated for being idle "
                        + "(for servers that must answer at any time)."))
                .build();
        return new StasisTool("process_start", "Start background process", "Starts a command in the background and "
                + "answers at once with its pid: servers, watchers, long builds, REPLs. Its output is kept (and survives "
                + "hibernation): read it with process_output, write to it with process_stdin, stop it with "
                + "process_signal.", schema, Kind.CHANGE, (client, args) -> {
                    var request = ProcessRequest.builder(SandboxTools.commandLine(args)).cwd(args.optString("cwd"))
                            .env(args.stringMap("env")).tag(args.optString("tag")).stdin(args.bool("stdin", false))
                            .keepAlive(args.bool("keepAwake", false));
                    BackgroundProcess process = client.sandboxes().processes(args.string("sandbox")).start(request.build());
                    return ToolResult.of("started pid " + process.pid() + ": " + describe(process.info())
                            + "\nread its output with process_output (pid " + process.pid() + ", offset 0)", process.info());
                });
    }

    private static StasisTool list() {
        return new StasisTool("process_list", "List background processes", "Lists the sandbox's background processes: "
                + "running ones and the last 100 that ended, with status, exit code and how much output each wrote.",
                SandboxTools.sandboxOnly(), Kind.READ, (client, args) -> {
                    List<ProcessInfo> processes = client.sandboxes().processes(args.string("sandbox")).list().stream()
                            .map(BackgroundProcess::info).toList();
                    String text = processes.isEmpty() ? "no background processes" : processes.stream()
                            .map(p -> "pid " + p.pid() + ": " + describe(p) + ", " + p.stdoutBytes() + " bytes stdout, "
                                    + p.stderrBytes() + " bytes stderr")
                            .collect(Collectors.joining("\n"));
                    return ToolResult.list(text, processes);
                });
    }

    private static StasisTool output() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("pid", integer(PID_DESCRIPTION, 1, Integer.MAX_VALUE))
                .optional("offset", integer("Byte offset in stdout to read from (default 0: from the start). Pass "
                        + "the 'next offset' of the previous answer to get only what is new.", 0, Long.MAX_VALUE))
                .optional("stderrOffset", integer("Byte offset in stderr to read from (default 0).", 0, Long.MAX_VALUE))
                .optional("waitSeconds", integer("First wait up to this many seconds for the process to end "
                        + "(default 0: read at once).", 0, 300))
                .optional("maxBytes", integer("At most this many bytes of each stream (default " + OUTPUT_BYTES + ").",
                        100, OUTPUT_BYTES_MAX))
                .build();
        return new StasisTool("process_output", "Read process output", "Reads what a background process wrote to "
                + "stdout and stderr from the given byte offsets, with its status (running, or its exit code), and the "
                + "offsets to read from next.", schema, Kind.READ, (client, args) -> {
                    BackgroundProcess process = process(client, args);
                    long wait = args.integer("waitSeconds", 0, 0, 300);
                    if (wait > 0) process.waitFor(Duration.ofSeconds(wait));
                    long offset = args.integer("offset", 0, 0, Long.MAX_VALUE);
                    long stderrOffset = args.integer("stderrOffset", 0, 0, Long.MAX_VALUE);
                    int max = (int) args.integer("maxBytes", OUTPUT_BYTES, 100, OUTPUT_BYTES_MAX);
                    ProcessOutput output = process.output(offset, stderrOffset);
                    return outputResult(output, process.info(), max);
                });
    }

    static ToolResult outputResult(ProcessOutput output, ProcessInfo process, int max) {
        Chunk stdout = Chunk.of(output.stdoutBytes(), output.stdoutStart(), output.stdoutOffset(), max);
        Chunk stderr = Chunk.of(output.stderrBytes(), output.stderrStart(), output.stderrOffset(), max);
        var text = new StringBuilder("pid ").append(process.pid()).append(": ").append(describe(process)).append('\n');
        stdout.describe("stdout", text);
        stderr.describe("stderr", text);
        boolean more = stdout.more() || stderr.more();
        if (more) text.append("more output waits: call again with offset=").append(stdout.next)
                .append(", stderrOffset=").append(stderr.next);
        else text.append("next offset=").append(stdout.next).append(", stderrOffset=").append(stderr.next);
        var json = new LinkedHashMap<String, Object>();
        json.put("stdout", stdout.text);
        json.put("stdoutStart", stdout.start);
        json.put("stdoutOffset", stdout.next);
        json.put("stderr", stderr.text);
        json.put("stderrStart", stderr.start);
        json.put("stderrOffset", stderr.next);
        json.put("more", more);
        json.put("process", ToolResult.json(process));
        return ToolResult.structured(text.toString(), json);
    }

    /** Part of one stream: at most {@code max} bytes from {@code start}, cut on a character boundary. */
    private record Chunk(String text, long start, long next, long end) {
        static Chunk of(byte[] bytes, long start, long end, int max) {
            int length = Texts.utf8Prefix(bytes, max);
            String text = new String(bytes, 0, length, StandardCharsets.UTF_8);
            return new Chunk(text, start, start + length, end);
        }

        boolean more() {
            return next < end;
        }

        void describe(String stream, StringBuilder out) {
            out.append("--- ").append(stream).append(" bytes ").append(start).append("..").append(next);
            if (more()) out.append(" (of ").append(end).append(')');
            out.append(" ---\n").append(text);
            if (!text.isEmpty() && !text.endsWith("\n")) out.append('\n');
        }
    }

    private static StasisTool stdin() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("pid", integer(PID_DESCRIPTION, 1, Integer.MAX_VALUE))
                .optional("text", string("Text to write to its standard input; end lines with \\n."))
                .optional("close", bool("true: then close its standard input (end of file)."))
                .build();
        return new StasisTool("process_stdin", "Write to process stdin", "Writes text to the standard input of a "
                + "background process started with stdin=true, and optionally closes it. Read the reaction with "
                + "process_output.", schema, Kind.CHANGE, (client, args) -> {
                    BackgroundProcess process = process(client, args);
                    String text = args.optString("text");
                    boolean close = args.bool("close", false);
                    if (text == null && !close) throw new InvalidArgumentsException("give 'text' to write, or 'close': true");
                    ProcessInfo info = process.info();
                    if (text != null) info = process.sendStdin(text);
                    if (close) info = process.closeStdin();
                    return ToolResult.of("pid " + info.pid() + ": " + (text == null ? "" : "wrote " + text.length() + " characters")
                            + (text != null && close ? ", " : "") + (close ? "closed stdin" : "") + "; " + describe(info), info);
                });
    }

    private static StasisTool signal() {
        var schema = object()
                .required("sandbox", string(SANDBOX_DESCRIPTION))
                .required("pid", integer(PID_DESCRIPTION, 1, Integer.MAX_VALUE))
                .optional("signal", enumeration("The signal (default TERM: ask it to end; KILL: end it at once; "
                        + "INT: like Ctrl-C).", SIGNALS))
                .build();
        return new StasisTool("process_signal", "Signal process", "Sends a signal to a background process, e.g. to "
                + "stop a server. Answers the process as it then is; check process_output with waitSeconds to see it end.",
                schema, Kind.CHANGE, (client, args) -> {
                    String signal = args.choice("signal", "TERM", SIGNALS);
                    ProcessInfo info = process(client, args).signal(signal);
                    return ToolResult.of("sent " + signal + " to pid " + info.pid() + "; " + describe(info), info);
                });
    }

    private static BackgroundProcess process(StasisClient client, ToolArguments args) {
        return client.sandboxes().processes(args.string("sandbox")).get(args.requiredInteger("pid", 1, Integer.MAX_VALUE));
    }

    static String describe(ProcessInfo p) {
        String command = String.join(" ", p.cmd());
        String status = switch (p.status()) {
            case "running" -> "running";
            case "exited" -> "exited with code " + p.exitCode() + (p.signal() == null ? "" : " (signal " + p.signal() + ")");
            default -> p.status();
        };
        return status + ", " + Texts.bounded(command, 200, "command shortened") + (p.tag() == null ? "" : " [" + p.tag() + "]");
    }

}

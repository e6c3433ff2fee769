package io.stasis.cli;

import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisClientException;
import io.stasis.sdk.StasisConnectionException;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * The {@code stasis} command line. {@link #run} runs it in-process (for tests) and returns the
 * exit code; {@link #main} exits the JVM with it.
 *
 * <pre>{@code
 * var out = new ByteArrayOutputStream();
 * int code = Main.run(new String[] {"--url", url, "--api-key", key, "list"},
 *         new PrintStream(out), System.err, InputStream.nullInputStream());
 * }</pre>
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        if (args.length == 2 && args[0].equals(CliDaemon.FLAG)) {
            System.exit(CliDaemon.serve(Path.of(args[1])));
        }
        var out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                false, StandardCharsets.UTF_8);
        var err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
        int code = run(args, out, err, System.in, System.getenv(), isTerminal(2));
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs the CLI with the process environment. */
    public static int run(String[] args, PrintStream out, PrintStream err, InputStream in) {
        return run(args, out, err, in, System.getenv());
    }

    /** Runs the CLI with the given environment (for {@code STASIS_URL}, {@code STASIS_API_KEY}, ...). */
    public static int run(String[] args, PrintStream out, PrintStream err, InputStream in, Map<String, String> env) {
        return run(args, out, err, in, env, false);
    }

    /** Like {@link #run(String[], PrintStream, PrintStream, InputStream, Map)}; progress lines go to {@code err} when {@code errIsTerminal}. */
    static int run(String[] args, PrintStream out, PrintStream err, InputStream in, Map<String, String> env,
                   boolean errIsTerminal) {
        return run(args, new CliIo(out, err, in, env, errIsTerminal));
    }

    /**
     * Runs the CLI with these streams, environment and working directory; {@link #RUN_LOCALLY} when
     * {@code io} is remote and the command must run in the caller's own process.
     */
    static int run(String[] args, CliIo io) {
        var out = io.out();
        var err = io.err();
        try (var root = new StasisCommand(io)) {
            var commandLine = new CommandLine(root);
            Subcommands.register(commandLine, args);
            commandLine.setUsageHelpWidth(100);
            commandLine.setOut(new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true));
            commandLine.setErr(new PrintWriter(new OutputStreamWriter(err, StandardCharsets.UTF_8), true));
            commandLine.setExecutionExceptionHandler((e, cmd, parsed) -> handle(e, io, parsed));
            return commandLine.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** Whether file descriptor {@code fd} of this process is a terminal (Linux: its link in /proc names a tty). */
    private static boolean isTerminal(int fd) {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return false; // no /proc: no progress lines, which is always safe
        }
    }

    /** What {@link #run(String[], CliIo)} answers for a command that {@link CliIo#requireLocal requires the caller}. */
    static final int RUN_LOCALLY = -1;

    /** Maps a failure to its message and exit code. */
    private static int handle(Exception e, CliIo io, ParseResult parsed) {
        io.out().flush();
        switch (e) {
            case CliIo.RunLocally local -> {
                return RUN_LOCALLY;
            }
            case StasisApiException api -> {
                io.err().println("error: " + api.code() + ": " + api.errorMessage());
                return ExitCodes.of(api);
            }
            case StasisConnectionException connection -> {
                io.err().println("error: " + connection.getMessage());
                return ExitCodes.CANNOT_CONNECT;
            }
            case UsageException usage -> {
                io.err().println("error: " + usage.getMessage());
                return ExitCodes.USAGE;
            }
            case UncheckedIOException local -> {
                io.err().println("error: " + local.getMessage());
                return ExitCodes.ERROR;
            }
            case CommandFailure failure -> {
                io.err().println("error: " + failure.getMessage());
                return ExitCodes.ERROR;
            }
            case StasisClientException client -> {
                io.err().println("error: " + client.getMessage());
                return ExitCodes.ERROR;
            }
            case IllegalArgumentException invalid -> {
                io.err().println("error: " + invalid.getMessage());
                return ExitCodes.USAGE;
            }
            default -> {
                io.err().print("error: unexpected failure: ");
                e.printStackTrace(io.err());
                return ExitCodes.ERROR;
            }
        }
    }
}

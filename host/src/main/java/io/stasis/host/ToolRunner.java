package io.stasis.host;

import io.stasis.core.concurrent.AheadOfDemand;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Starts one host tool, waits for it and hands back what it printed. It serves the classes that
 * each own one binary ({@code Btrfs}, {@code LoopDevices}, {@code Debootstrap}, {@code Tar},
 * {@code Busybox}, {@link Mounts}): they choose the flags and the timeout and map failures to
 * errors; this class only runs the process, always the same way:
 * <ul>
 *   <li>stdin is {@code /dev/null}, so a tool that asks a question gets EOF instead of hanging;</li>
 *   <li>{@code LC_ALL=C}, so the messages we parse and quote stay in English;</li>
 *   <li>{@code PATH} is the {@linkplain #SYSTEM_DIRS system directories} followed by the service's
 *       own PATH: tools such as debootstrap and tar start helpers of their own;</li>
 *   <li>stdout and stderr are read line by line on virtual threads (a full pipe would hang the
 *       tool); each keeps at most its last {@value #MAX_CAPTURE_CHARS} characters, the rest is read
 *       and dropped;</li>
 *   <li>a tool that outlives its timeout is killed with all its descendants, and so is one whose
 *       caller is interrupted: a tool is never leaked;</li>
 *   <li>it runs in the {@linkplain #runToolsIn tools' cgroup}, at a lower CPU weight than the API,
 *       and lower still when started {@linkplain AheadOfDemand ahead of demand}.</li>
 * </ul>
 * Lines end at {@code \n}, {@code \r} or {@code \r\n}, as {@link java.io.BufferedReader#readLine()}
 * splits them.
 */
public final class ToolRunner {
    /** Error messages quote at most this many of a tool's last output lines... */
    public static final int TAIL_LINES = 30;
    /** ...and at most this many characters of them: the end, where the reason usually is. */
    public static final int TAIL_CHARS = 3000;
    /** Each stream keeps at most this many characters, as whole lines from its end. */
    static final int MAX_CAPTURE_CHARS = 4 << 20;
    /** A line longer than this is handed on in pieces: output without newlines stays bounded too. */
    static final int MAX_LINE_CHARS = 64 << 10;
    /** Where root's tools live, whatever PATH the service was started with; searched in this order. */
    public static final List<Path> SYSTEM_DIRS = List.of(Path.of("/usr/local/sbin"), Path.of("/usr/local/bin"),
            Path.of("/usr/sbin"), Path.of("/usr/bin"), Path.of("/sbin"), Path.of("/bin"));
    /** The pipes close when the tool exits, unless it left a child holding them open: wait this long. */
    private static final long PIPE_GRACE_MILLIS = 5_000;

    /**
     * What a finished tool left behind: its exit code, its output as lines (the last
     * {@value #MAX_CAPTURE_CHARS} characters of each stream at most) and how long it ran.
     */
    public record Result(int exitCode, List<String> stdout, List<String> stderr, long millis) {
        public Result {
            stdout = List.copyOf(stdout);
            stderr = List.copyOf(stderr);
        }

        /** The whole of stdout, lines joined with {@code \n} (no trailing newline). */
        public String stdoutText() {
            return String.join("\n", stdout);
        }

        /** The whole of stderr, lines joined with {@code \n} (no trailing newline). */
        public String stderrText() {
            return String.join("\n", stderr);
        }

        /** The end of stderr, for error messages: see {@link ToolRunner#tail(List)}. */
        public String stderrTail() {
            return tail(stderr);
        }
    }

    /** The tool did not finish in time and was killed with its descendants. */
    public static final class TimedOut extends Exception {
        TimedOut(String message) {
            super(message);
        }
    }

    /** Where tools run, once the service has set it; empty: in the service's own cgroup. */
    private static volatile Optional<ToolCgroup> cgroup = Optional.empty();

    private ToolRunner() {
    }

    /** From now on, every tool started here and by {@link #start} runs in {@code cgroup} (empty: the service's). */
    public static void runToolsIn(Optional<ToolCgroup> cgroup) {
        ToolRunner.cgroup = cgroup;
    }

    /**
     * Starts a tool's process built by its caller (a tool whose output goes to files, say), as every
     * tool here is started: in the {@linkplain #runToolsIn tools' cgroup}.
     */
    public static Process start(ProcessBuilder builder) throws IOException {
        Process process = OffCarrier.call(builder::start); // a start is JNI that waits for the child's exec: 5-160 ms on a busy host
        cgroup.ifPresent(c -> c.enter(process.pid(), AheadOfDemand.now()));
        return process;
    }

    /**
     * Finds the executable {@code name} in the {@linkplain #SYSTEM_DIRS system directories}, then in
     * the service's PATH; returns the bare name if it is nowhere (starting it then fails with an
     * {@link IOException} that names it).
     */
    public static Path locate(String name) {
        for (Path dir : searchPath()) {
            Path candidate = dir.resolve(name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return candidate;
        }
        return Path.of(name);
    }

    /**
     * Runs {@code argv} to completion and returns what it printed, whatever its exit code.
     *
     * @throws IOException the tool could not be started (e.g. it is not installed)
     * @throws TimedOut it ran longer than {@code timeout}; it and its descendants were killed
     * @throws InterruptedException the caller was interrupted; the tool was killed
     */
    public static Result run(List<String> argv, Duration timeout) throws IOException, InterruptedException, TimedOut {
        return run(argv, timeout, line -> { });
    }

    /**
     * Like {@link #run(List, Duration)}, and hands every line of either stream to {@code lines} as it
     * arrives (for progress reports), from the threads that read the pipes: the two streams may
     * call it concurrently. An exception from {@code lines} is ignored, so a broken progress
     * callback never stalls the tool.
     */
    public static Result run(List<String> argv, Duration timeout, Consumer<String> lines)
            throws IOException, InterruptedException, TimedOut {
        return run(argv, timeout, lines, null);
    }

    /**
     * Like {@link #run(List, Duration)}, with {@code input} as the tool's standard input (for a tool
     * that reads a script from {@code /dev/stdin}: no temporary file to leave behind if the caller dies).
     */
    public static Result run(List<String> argv, Duration timeout, byte[] input) throws IOException, InterruptedException, TimedOut {
        return run(argv, timeout, line -> { }, input);
    }

    /** What a caller does with a streamed tool while it runs: reads its stdout, or writes its stdin and closes it. */
    @FunctionalInterface
    public interface StreamBody<R> {
        R with(Process process) throws IOException, InterruptedException;
    }

    /** What a streamed tool's caller returned, and how the tool ended (no stdout: the caller had it). */
    public record Streamed<R>(R value, Result result) {
    }

    /** The caller's side of a streamed tool failed (a read or write, or the tool stopped early): with the tool's stderr. */
    public static final class StreamFailed extends Exception {
        StreamFailed(String message, IOException cause) {
            super(message, cause);
        }
    }

    /**
     * Runs a tool whose stdin ({@code feedsStdin}) or stdout the caller streams in {@code body}
     * (the other is {@code /dev/null}), keeping stderr for the result; once {@code body} is done,
     * waits for the tool's exit at most {@code timeout}. The tool and its descendants never outlive
     * the call. Same environment as {@link #run(List, Duration)}.
     *
     * @throws StreamFailed {@code body} failed with an {@link IOException}; the tool was killed
     * @throws TimedOut the tool did not exit within {@code timeout} after {@code body}; it was killed
     */
    public static <R> Streamed<R> stream(List<String> argv, Duration timeout, boolean feedsStdin, StreamBody<R> body)
            throws IOException, InterruptedException, TimedOut, StreamFailed {
        long start = System.nanoTime();
        var builder = builder(argv);
        if (feedsStdin) builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        else builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process process = start(builder);
        try {
            var err = new Capture(MAX_CAPTURE_CHARS);
            var errDone = drain(process.getErrorStream(), err, line -> { });
            R value;
            try {
                value = body.with(process);
            } catch (IOException e) {
                killTree(process);
                await(errDone);
                throw new StreamFailed(e + withStderr(err), e);
            }
            awaitExit(process, argv, timeout, err, errDone);
            await(errDone);
            return new Streamed<>(value, new Result(process.exitValue(), List.of(), err.lines(), (System.nanoTime() - start) / 1_000_000));
        } finally {
            if (process.isAlive()) killTree(process);
        }
    }

    /** Waits for the tool's exit; past {@code timeout} kills it with its descendants, quoting the end of its stderr. */
    private static void awaitExit(Process process, List<String> argv, Duration timeout, Capture err, CompletableFuture<Void> errDone)
            throws InterruptedException, TimedOut {
        if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) return;
        killTree(process);
        await(errDone); // what it printed last is the likeliest reason
        throw new TimedOut(argv.getFirst() + " did not finish within " + describe(timeout) + withStderr(err));
    }

    private static String withStderr(Capture err) {
        String stderr = tail(err.lines());
        return stderr.isEmpty() ? "" : "; stderr: " + stderr;
    }

    /** A tool's process, as every run here starts one: {@code LC_ALL=C} and the system directories first in PATH. */
    private static ProcessBuilder builder(List<String> argv) {
        var builder = new ProcessBuilder(argv);
        builder.environment().put("LC_ALL", "C");
        builder.environment().put("PATH", String.join(File.pathSeparator, searchPath().stream().map(Path::toString).toList()));
        return builder;
    }

    private static Result run(List<String> argv, Duration timeout, Consumer<String> lines, byte[] input)
            throws IOException, InterruptedException, TimedOut {
        long start = System.nanoTime();
        var builder = builder(argv);
        if (input == null) builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        try (var tool = new Ahead(argv, start(builder), lines)) {
            return tool.finish(input, timeout, start);
        }
    }

    /**
     * Starts a tool before its call comes, reading its stdin: {@link Ahead#run} gives it its input
     * then. For a tool on a path where its start would be most of the wait (a process start is
     * 5-30 ms on a busy host, the tool's own work a few): started after the last call, it is ready
     * for the next. It waits in a read, using no CPU; if the service ends, its stdin closes.
     *
     * @throws IOException the tool could not be started
     */
    public static Ahead startAhead(List<String> argv) throws IOException {
        return new Ahead(argv, start(builder(argv)), line -> { });
    }

    /**
     * A tool started, its stdout and stderr read as it prints; waiting for its stdin until {@link #run}.
     * {@link #close} kills one never run (and one still running: never leaked).
     */
    public static final class Ahead implements AutoCloseable {
        private final List<String> argv;
        private final Process process;
        private final Capture out = new Capture(MAX_CAPTURE_CHARS);
        private final Capture err = new Capture(MAX_CAPTURE_CHARS);
        private final CompletableFuture<Void> outDone;
        private final CompletableFuture<Void> errDone;

        private Ahead(List<String> argv, Process process, Consumer<String> lines) {
            this.argv = List.copyOf(argv);
            this.process = process;
            outDone = drain(process.getInputStream(), out, lines);
            errDone = drain(process.getErrorStream(), err, lines);
        }

        /** Whether it is still there to be run (not ended, or killed, meanwhile). */
        public boolean isAlive() {
            return process.isAlive();
        }

        /** Its process id (once run, the tool's: it runs in the same process). */
        public long pid() {
            return process.pid();
        }

        /**
         * Writes {@code input} (null: nothing) to its stdin and closes it, then waits for its exit as {@link
         * ToolRunner#run(List, Duration)} does; {@code millis} of the result count from this call.
         */
        public Result run(byte[] input, Duration timeout) throws InterruptedException, TimedOut {
            return finish(input, timeout, System.nanoTime());
        }

        private Result finish(byte[] input, Duration timeout, long startNanos) throws InterruptedException, TimedOut {
            try (var stdin = process.getOutputStream()) { // closed with nothing written for no input: EOF
                if (input != null) stdin.write(input);
            } catch (IOException e) {
                // the tool ended without reading all of it: its exit code and stderr tell why
            }
            awaitExit(process, argv, timeout, err, errDone);
            await(outDone);
            await(errDone);
            return new Result(process.exitValue(), out.lines(), err.lines(), (System.nanoTime() - startNanos) / 1_000_000);
        }

        @Override
        public void close() {
            if (process.isAlive()) killTree(process);
        }
    }

    /**
     * The last {@value #TAIL_LINES} lines, stripped, and of those the last {@value #TAIL_CHARS}
     * characters (marked by a leading {@code ...} when cut): what an error message quotes.
     */
    public static String tail(List<String> lines) {
        var last = lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size());
        String text = String.join("\n", last).strip();
        return text.length() <= TAIL_CHARS ? text : "..." + text.substring(text.length() - TAIL_CHARS);
    }

    /** The system directories, then the service's PATH, each once. */
    private static List<Path> searchPath() {
        var dirs = new LinkedHashSet<>(SYSTEM_DIRS);
        String path = System.getenv("PATH");
        if (path != null)
            for (String dir : path.split(File.pathSeparator)) if (!dir.isEmpty()) dirs.add(Path.of(dir));
        return List.copyOf(dirs);
    }

    private static String describe(Duration timeout) {
        return timeout.toMillis() < 10_000 ? timeout.toMillis() + " ms" : timeout.toSeconds() + " s";
    }

    /**
     * SIGKILL to the tool and its descendants, through its handle: {@link Process#destroyForcibly()}
     * would also close the pipes, losing what the tool printed last, its reason, before it was read.
     */
    public static void killTree(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.toHandle().destroyForcibly();
    }

    /** Reads {@code in} to its end on a virtual thread; the future completes when the pipe closes. */
    private static CompletableFuture<Void> drain(InputStream in, Capture capture, Consumer<String> listener) {
        var done = new CompletableFuture<Void>();
        Thread.ofVirtual().name("tool-pipe").start(() -> {
            try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                new LineSplitter(line -> {
                    capture.add(line);
                    try {
                        listener.accept(line);
                    } catch (RuntimeException ignored) {
                        // a broken progress callback must not stall the pipe
                    }
                }).readAll(reader);
            } catch (IOException e) {
                // the process went away; what we have is what there is
            } finally {
                done.complete(null);
            }
        });
        return done;
    }

    /** Waits a little for a pipe to close; a grandchild holding it open must not hold us up. */
    private static void await(CompletableFuture<Void> pipe) throws InterruptedException {
        try {
            pipe.get(PIPE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // keep what was read so far
        }
    }

    /** The last lines of one stream, at most {@code maxChars} characters of them; thread-safe. */
    private static final class Capture {
        private final int maxChars;
        private final ArrayDeque<String> lines = new ArrayDeque<>();
        private long chars;

        Capture(int maxChars) {
            this.maxChars = maxChars;
        }

        synchronized void add(String line) {
            lines.addLast(line);
            chars += line.length();
            while (chars > maxChars && lines.size() > 1) chars -= lines.removeFirst().length();
        }

        synchronized List<String> lines() {
            return new ArrayList<>(lines);
        }
    }

    /** Splits characters into lines the way {@code BufferedReader.readLine} does, with a length cap. */
    private static final class LineSplitter {
        private final Consumer<String> sink;
        private final StringBuilder line = new StringBuilder();
        private boolean afterCr;
        /** The current line was just handed on because it hit the cap: its newline adds no empty line. */
        private boolean cut;

        LineSplitter(Consumer<String> sink) {
            this.sink = sink;
        }

        void readAll(Reader reader) throws IOException {
            char[] buffer = new char[8192];
            try {
                for (int n; (n = reader.read(buffer)) >= 0; ) for (int i = 0; i < n; i++) accept(buffer[i]);
            } finally {
                if (!line.isEmpty()) emit(); // the last line, without a newline (or cut short by an error)
            }
        }

        private void accept(char c) {
            boolean crlf = afterCr && c == '\n';
            afterCr = c == '\r';
            if (crlf) return; // the \n of \r\n: the line already ended at \r
            if (c == '\n' || c == '\r') {
                if (!(cut && line.isEmpty())) emit();
                cut = false;
                return;
            }
            line.append(c);
            cut = false;
            if (line.length() >= MAX_LINE_CHARS) {
                emit();
                cut = true;
            }
        }

        private void emit() {
            sink.accept(line.toString());
            line.setLength(0);
        }
    }
}

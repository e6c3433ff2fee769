package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ToolRunnerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static ToolRunner.Result sh(String script) throws Exception {
        return ToolRunner.run(List.of("/bin/sh", "-c", script), TIMEOUT);
    }

    @Test
    void returnsTheExitCodeAndBothStreamsWhole() throws Exception {
        var result = sh("echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 3");
        assertThat(result.exitCode()).isEqualTo(3);
        assertThat(result.stdout()).containsExactly("out1", "out2");
        assertThat(result.stdoutText()).isEqualTo("out1\nout2");
        assertThat(result.stderr()).containsExactly("err1", "err2");
        assertThat(result.stderrText()).isEqualTo("err1\nerr2");
        assertThat(result.stderrTail()).isEqualTo("err1\nerr2");
        assertThat(result.millis()).isNotNegative();
    }

    @Test
    void handsEveryLineOfBothStreamsToTheListenerEvenWhenItThrows() throws Exception {
        var seen = new CopyOnWriteArrayList<String>();
        var thrown = new AtomicBoolean();
        var result = ToolRunner.run(List.of("/bin/sh", "-c", "echo o1; echo e1 >&2; echo o2; echo e2 >&2"), TIMEOUT, line -> {
            seen.add(line);
            if (thrown.compareAndSet(false, true)) throw new IllegalStateException("a broken progress callback");
        });
        assertThat(seen).containsExactlyInAnyOrder("o1", "e1", "o2", "e2");
        assertThat(result.stdout()).containsExactly("o1", "o2");
        assertThat(result.stderr()).containsExactly("e1", "e2");
    }

    @Test
    void givesTheToolItsInputOnStandardInput() throws Exception {
        byte[] script = "line one\nline two\n".repeat(20_000).getBytes(StandardCharsets.UTF_8);
        var result = ToolRunner.run(List.of("/bin/sh", "-c", "wc -c < /dev/stdin"), TIMEOUT, script);
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdoutText().strip()).isEqualTo(Integer.toString(script.length));
        var refused = ToolRunner.run(List.of("/bin/sh", "-c", "exit 4"), TIMEOUT, script);
        assertThat(refused.exitCode()).as("a tool that reads none of it").isEqualTo(4);
    }

    @Test
    void runsInTheCLocaleWithStdinFromDevNullAndTheSystemDirsFirstInPath() throws Exception {
        // cat would wait forever on an inherited stdin; /dev/null gives it EOF at once.
        var result = sh("echo \"$LC_ALL\"; echo \"$PATH\"; cat; echo done");
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdout().get(0)).isEqualTo("C");
        assertThat(result.stdout().get(1)).startsWith("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        assertThat(result.stdout().get(2)).isEqualTo("done");
    }

    @Test
    void splitsLinesAsReadLineDoes() throws Exception {
        var result = ToolRunner.run(List.of(ToolRunner.locate("printf").toString(), "a\\r\\nb\\rc\\n\\nd"), TIMEOUT);
        assertThat(result.stdout()).containsExactly("a", "b", "c", "", "d");
    }

    @Test
    void aToolStartedAheadWaitsForItsInputThenRunsAsAnyOther() throws Exception {
        try (var tool = ToolRunner.startAhead(List.of("/bin/sh", "-c", "echo started >&2; read line; echo \"got $line\"; exit 5"))) {
            Thread.sleep(200);
            assertThat(tool.isAlive()).as("waiting for its input").isTrue();
            var result = tool.run("the input\n".getBytes(StandardCharsets.UTF_8), TIMEOUT);
            assertThat(result.exitCode()).isEqualTo(5);
            assertThat(result.stdout()).containsExactly("got the input");
            assertThat(result.stderr()).containsExactly("started");
            assertThat(tool.isAlive()).isFalse();
        }
        try (var tool = ToolRunner.startAhead(List.of("/bin/sh", "-c", "cat; echo end"))) {
            assertThat(tool.run(null, TIMEOUT).stdout()).as("no input: its stdin closed empty").containsExactly("end");
        }
    }

    @Test
    void aToolStartedAheadAndNeverRunIsKilledOnClose() throws Exception {
        ProcessHandle process;
        try (var tool = ToolRunner.startAhead(List.of("/bin/sh", "-c", "sleep 60"))) {
            assertThat(tool.isAlive()).isTrue();
            process = ProcessHandle.current().children().filter(p -> p.info().commandLine().orElse("").contains("sleep 60")).findFirst()
                    .orElseThrow();
        }
        process.onExit().get(10, TimeUnit.SECONDS);
        assertThat(process.isAlive()).isFalse();
    }

    @Test
    void killsATimedOutToolWithItsChildren() throws Exception {
        var pids = new CopyOnWriteArrayList<Long>();
        long start = System.nanoTime();
        assertThatThrownBy(() -> ToolRunner.run(List.of("/bin/sh", "-c", "sleep 60 & echo $!; echo waiting >&2; wait"),
                Duration.ofMillis(500), line -> {
                    if (line.matches("\\d+")) pids.add(Long.parseLong(line));
                }))
                .isInstanceOf(ToolRunner.TimedOut.class)
                .hasMessageContaining("/bin/sh did not finish within 500 ms")
                .hasMessageContaining("stderr: waiting");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
        assertThat(pids).hasSize(1);
        var child = ProcessHandle.of(pids.getFirst());
        if (child.isPresent()) child.get().onExit().get(10, TimeUnit.SECONDS); // killed: it ends well before its 60 s
    }

    @Test
    void keepsTheEndOfALongOutputWithinItsBound() throws Exception {
        int lines = 1_000_000; // ~5.9 M characters, more than a stream keeps
        var result = ToolRunner.run(List.of(ToolRunner.locate("seq").toString(), "1", Integer.toString(lines)), TIMEOUT);
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdout().getLast()).isEqualTo(Integer.toString(lines));
        assertThat(result.stdout().getFirst()).isNotEqualTo("1");
        long kept = result.stdout().stream().mapToLong(String::length).sum();
        assertThat(kept).isLessThanOrEqualTo(ToolRunner.MAX_CAPTURE_CHARS).isGreaterThan(ToolRunner.MAX_CAPTURE_CHARS - 10);
    }

    @Test
    void cutsALineWithoutNewlinesIntoBoundedPieces() throws Exception {
        int length = 3 * ToolRunner.MAX_LINE_CHARS + 100;
        var result = sh("head -c " + length + " /dev/zero | tr '\\0' x; echo; echo next");
        assertThat(result.stdout()).extracting(String::length)
                .containsExactly(ToolRunner.MAX_LINE_CHARS, ToolRunner.MAX_LINE_CHARS, ToolRunner.MAX_LINE_CHARS, 100, 4);
        var exact = sh("head -c " + ToolRunner.MAX_LINE_CHARS + " /dev/zero | tr '\\0' x; echo; echo next");
        assertThat(exact.stdout()).extracting(String::length).containsExactly(ToolRunner.MAX_LINE_CHARS, 4);
    }

    @Test
    void tailQuotesTheLastLinesAndCharacters() {
        var many = IntStream.rangeClosed(1, 100).mapToObj(i -> "line " + i).toList();
        String tail = ToolRunner.tail(many);
        assertThat(tail.lines()).hasSize(ToolRunner.TAIL_LINES).first().isEqualTo("line 71");
        assertThat(tail).endsWith("line 100");

        String longLine = "x".repeat(ToolRunner.TAIL_CHARS * 2) + "the reason";
        assertThat(ToolRunner.tail(List.of(longLine))).startsWith("...").endsWith("the reason")
                .hasSize(ToolRunner.TAIL_CHARS + 3);
        assertThat(ToolRunner.tail(List.of("  padded  ", ""))).isEqualTo("padded");
        assertThat(ToolRunner.tail(List.of())).isEmpty();
    }

    @Test
    void locatesToolsInTheSystemDirsAndFallsBackToTheBareName() {
        Path sh = ToolRunner.locate("sh");
        assertThat(sh).isAbsolute();
        assertThat(ToolRunner.SYSTEM_DIRS).contains(sh.getParent());
        assertThat(Files.isExecutable(sh)).isTrue();
        assertThat(ToolRunner.locate("stasis-no-such-tool")).isEqualTo(Path.of("stasis-no-such-tool"));
    }

    @Test
    void aToolThatCannotStartIsAnIOException() {
        assertThatThrownBy(() -> ToolRunner.run(List.of("/nonexistent/stasis-tool"), TIMEOUT))
                .isInstanceOf(IOException.class).hasMessageContaining("/nonexistent/stasis-tool");
    }

    @Test
    void streamsAToolsOutputToTheCallerAndKeepsItsStderr() throws Exception {
        var streamed = ToolRunner.stream(List.of("/bin/sh", "-c", "seq 1 100000; echo done >&2; exit 2"), TIMEOUT, false,
                process -> {
                    try (var in = process.getInputStream()) {
                        return new String(in.readAllBytes(), StandardCharsets.US_ASCII).lines().count();
                    }
                });
        assertThat(streamed.value()).isEqualTo(100_000L);
        assertThat(streamed.result().exitCode()).isEqualTo(2);
        assertThat(streamed.result().stderr()).containsExactly("done");
        assertThat(streamed.result().stdout()).isEmpty();
    }

    @Test
    void feedsAToolFromTheCaller() throws Exception {
        Path out = Files.createTempFile("stasis-toolrunner", ".txt");
        try {
            var streamed = ToolRunner.stream(List.of("/bin/sh", "-c", "cat > " + out), TIMEOUT, true, process -> {
                try (var stdin = process.getOutputStream()) {
                    stdin.write("fed\n".repeat(50_000).getBytes(StandardCharsets.US_ASCII));
                }
                return null;
            });
            assertThat(streamed.result().exitCode()).isZero();
            assertThat(Files.size(out)).isEqualTo(4L * 50_000);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    @Test
    void aFailedStreamKillsTheToolWithItsChildrenAndQuotesItsStderr() throws Exception {
        var pids = new CopyOnWriteArrayList<Long>();
        assertThatThrownBy(() -> ToolRunner.stream(List.of("/bin/sh", "-c", "echo refusing >&2; sleep 60 & echo $!; wait"), TIMEOUT, false,
                process -> {
                    var line = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII)).readLine();
                    pids.add(Long.parseLong(line));
                    throw new IOException("the reader gave up");
                }))
                .isInstanceOf(ToolRunner.StreamFailed.class)
                .hasMessageContaining("the reader gave up")
                .hasMessageContaining("stderr: refusing");
        var child = ProcessHandle.of(pids.getFirst());
        if (child.isPresent()) child.get().onExit().get(10, TimeUnit.SECONDS); // killed: it ends well before its 60 s
    }
}

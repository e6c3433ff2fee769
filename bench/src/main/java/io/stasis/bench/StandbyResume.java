package io.stasis.bench;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.Sandbox;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Standby and back, of a sandbox whose process answers on a pipe: a {@code tiny} sandbox with a
 * shell loop (small), and a {@code base} sandbox with a python REPL holding 300 MiB of random bytes
 * (incompressible). The benchmark talks to the process itself over a TCP connection from the host
 * to the sandbox's address, opened once before the first standby (a standby keeps connections), so
 * an answer is the process's own, not the API's. A connection rather than FIFOs in the root, which
 * the host could write: a FIFO made inside a gVisor sandbox is the sentry's own, not on the host.
 * <ul>
 *   <li>{@code standby_call}: {@code POST .../standby} until it answers (frozen; the page-out runs on);</li>
 *   <li>{@code standby_paged_out}: from that call's start until the sandbox's cgroup charge stops falling;</li>
 *   <li>{@code standby_ram_freed}: how much of the cgroup's whole charge went, in percent (goal >= 90):
 *       the charge counts kernel memory too (page tables, kernel stacks, slab), which stays while the
 *       processes exist; {@code standby_pages_freed}: the same of the pages charged to it (memory.stat
 *       {@code rss + cache}: its processes' memory and the page cache they read). Not VmRSS: summed
 *       over the processes it counts pages shared with other sandboxes (stasis-init's binary), charged
 *       to whichever cgroup read them first, that no standby of one sandbox can give back;</li>
 *   <li>{@code standby_resume_to_answer}: from {@code POST .../resume} until the process answered a line
 *       (goals: small <= 25 ms, 300 MiB <= 50 ms);</li>
 *   <li>{@code standby_resume_call}: the resume call alone;</li>
 *   <li>{@code standby_fully_resident.300MB}: after that answer, until the REPL has read every byte back
 *       (its SHA-256), all of it back in RAM.</li>
 * </ul>
 * Compare {@code hibernate_call} and {@code hibernate_resume_call} of the same run, and gVisor's
 * restore measured beside it (docs/BENCHMARKS.md).
 */
final class StandbyResume implements Scenario {
    static final double SMALL_TARGET_MS = 25;
    static final double LARGE_TARGET_MS = 50;
    static final double FREED_TARGET_PERCENT = 90;
    static final long LARGE = 300L << 20;

    private static final int PORT = 7000;
    /** A shell loop answering each line on the one connection it takes. */
    private static final String LOOP = "(nc -l -p " + PORT + " -e sh -c 'while read line; do echo \"$line\"; done' >/dev/null 2>&1 &)";
    private static final String REPL = """
            import hashlib, os, socket
            buf = bytearray(os.urandom(%d))
            server = socket.create_server(('0.0.0.0', %d))
            with open('/tmp/ready', 'w') as f: f.write('1')
            connection, _ = server.accept()
            with connection, connection.makefile('rw') as lines:
                for line in lines:
                    line = line.strip()
                    lines.write((hashlib.sha256(buf).hexdigest() if line == 'hash' else line) + '\\n')
                    lines.flush()
            """;

    @Override
    public String name() {
        return "standby";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var figures = new ArrayList<Figure>();
        var details = new LinkedHashMap<String, Object>();
        figures.addAll(measure(context, "idle", null, details));
        if (LARGE <= context.maxSize()) figures.addAll(measure(context, "300MB", LARGE, details));
        else details.put("skipped", Map.of("300MB", "above --max-size"));
        return new ScenarioResult(figures, details);
    }

    private List<Figure> measure(BenchContext context, String label, Long bytes, Map<String, Object> details) throws Exception {
        var service = context.service();
        boolean large = bytes != null;
        Sandbox sandbox = service.create(CreateSandboxRequest.builder().template(large ? "base" : "tiny").memoryMb(large ? 1024 : 256).build());
        try {
            if (large) {
                sandbox.files().write("/root/repl.py", REPL.formatted(bytes, PORT));
                HibernateResume.requireSuccess(sandbox.exec("sh", "-c", "(python3 /root/repl.py >/dev/null 2>&1 &)"), "start the REPL");
                HibernateResume.requireSuccess(sandbox.exec("sh", "-c",
                        "i=0; while [ ! -e /tmp/ready ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 1; sleep 0.05; done"), "wait for the REPL");
            } else {
                HibernateResume.requireSuccess(sandbox.exec("sh", "-c", LOOP), "start the loop");
            }
            try (var process = Conversation.open(sandbox, PORT)) {
                return measure(context, label, sandbox, process, large);
            }
        } finally {
            sandbox.delete();
        }
    }

    /** Standby and resume of {@code sandbox} again and again, {@code process} answering after each resume. */
    private List<Figure> measure(BenchContext context, String label, Sandbox sandbox, Conversation process, boolean large) throws Exception {
        var service = context.service();
        process.ask("warm");
        String cgroup = "/sys/fs/cgroup/memory" + PrivateService.cgroupOf(sandbox.id());
        int n = context.counts().hibernate();
        double[] enters = new double[n], pagedOut = new double[n], freed = new double[n], pagesFreed = new double[n];
        double[] calls = new double[n], full = new double[n];
        String digest = large ? process.ask("hash") : null;
        double[] answers = context.sampler().run("standby + resume (" + label + ")", context.counts().warmupOfSlowSeries(), n, i -> {
            long before = charge(cgroup);
            long pagesBefore = pages(cgroup);
            long start = System.nanoTime();
            service.live().standby(sandbox.id());
            long entered = System.nanoTime();
            long[] stable = awaitStable(cgroup);
            long after = stable[0];
            long settled = stable[1];
            long pagesAfter = pages(cgroup);
            long resumeStart = System.nanoTime();
            service.live().resume(sandbox.id());
            long resumed = System.nanoTime();
            String answer = process.ask("ping");
            long answered = System.nanoTime();
            if (!answer.equals("ping")) throw new IllegalStateException("the process answered " + answer + " after the resume");
            double fullMs = 0;
            if (large) {
                String now = process.ask("hash");
                fullMs = Format.millis(System.nanoTime() - answered);
                if (!now.equals(digest)) throw new IllegalStateException("the 300 MiB came back different: " + now + " != " + digest);
            }
            if (i >= 0) {
                enters[i] = Format.millis(entered - start);
                pagedOut[i] = Format.millis(settled - start);
                freed[i] = before == 0 ? 0 : 100.0 * (before - after) / before;
                pagesFreed[i] = pagesBefore == 0 ? 0 : 100.0 * (pagesBefore - pagesAfter) / pagesBefore;
                calls[i] = Format.millis(resumed - resumeStart);
                full[i] = fullMs;
            }
            return Format.millis(answered - resumeStart);
        });
        var result = new ArrayList<Figure>();
        result.add(Figure.of("standby_call." + label, name(), "ms", "POST .../standby of a " + describe(label) + " until it answers (frozen)",
                Stats.of(enters)));
        result.add(Figure.of("standby_paged_out." + label, name(), "ms",
                "from the standby call's start until the sandbox's cgroup charge stopped falling", Stats.of(pagedOut)));
        result.add(Figure.of("standby_ram_freed." + label, name(), "%", "of the cgroup's memory charge given back by the standby",
                Stats.of(freed)).withTarget(Target.atLeast(FREED_TARGET_PERCENT)));
        result.add(Figure.of("standby_pages_freed." + label, name(), "%",
                "of the pages charged to the sandbox (memory.stat rss + cache; kernel memory aside) given back by the standby", Stats.of(pagesFreed))
                .withTarget(Target.atLeast(FREED_TARGET_PERCENT)));
        result.add(Figure.of("standby_resume_to_answer." + label, name(), "ms",
                "POST .../resume until the process inside answered a line on its connection", Stats.of(answers))
                .withTarget(Target.atMost(large ? LARGE_TARGET_MS : SMALL_TARGET_MS)));
        result.add(Figure.of("standby_resume_call." + label, name(), "ms", "POST .../resume alone", Stats.of(calls)));
        if (large) result.add(Figure.of("standby_fully_resident." + label, name(), "ms",
                "after that answer, until the REPL read all 300 MiB back (their SHA-256, checked)", Stats.of(full)));
        return result;
    }

    private static String describe(String label) {
        return label.equals("idle") ? "tiny sandbox (a shell loop)" : "base sandbox with a python REPL holding 300 MiB of random bytes";
    }

    /** A line connection to the sandbox's process: a line written, its answer read. */
    private record Conversation(Socket socket, BufferedReader in, Writer out) implements AutoCloseable {
        /** Connects to the sandbox's {@code port}, trying again while its process is not listening yet (at most 10 s). */
        static Conversation open(Sandbox sandbox, int port) throws IOException, InterruptedException {
            var address = new InetSocketAddress(sandbox.network().address(), port);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (true) {
                var socket = new Socket();
                try {
                    socket.connect(address, 2_000);
                    socket.setTcpNoDelay(true);
                    socket.setSoTimeout(60_000);
                    return new Conversation(socket, new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)),
                            new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8));
                } catch (IOException e) {
                    socket.close();
                    if (System.nanoTime() > deadline) throw new IOException("nothing listens at " + address + " in the sandbox", e);
                    Thread.sleep(20);
                }
            }
        }

        String ask(String line) throws IOException {
            out.write(line + "\n");
            out.flush();
            String answer = in.readLine();
            if (answer == null) throw new IOException("the sandbox's process closed the connection");
            return answer.strip();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private static long charge(String cgroup) throws IOException {
        return Long.parseLong(Files.readString(Path.of(cgroup, "memory.usage_in_bytes")).strip());
    }

    /** The pages charged to the cgroup: anonymous memory and page cache (memory.stat {@code rss}, {@code cache}). */
    private static long pages(String cgroup) throws IOException {
        long pages = 0;
        for (String line : Files.readAllLines(Path.of(cgroup, "memory.stat")))
            if (line.startsWith("rss ") || line.startsWith("cache ")) pages += Long.parseLong(line.substring(line.indexOf(' ') + 1).strip());
        return pages;
    }

    /** The charge once it has not fallen for 200 ms (at most 60 s), and the time it last fell. */
    private static long[] awaitStable(String cgroup) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        long last = charge(cgroup);
        long stableSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(10);
            long now = charge(cgroup);
            if (now < last) {
                last = now;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > 200_000_000L) {
                return new long[] {now, stableSince};
            }
        }
        return new long[] {last, stableSince};
    }
}

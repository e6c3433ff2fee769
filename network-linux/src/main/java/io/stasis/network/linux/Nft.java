package io.stasis.network.linux;

import io.stasis.core.error.StasisException;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs {@code nft}. A script is applied with {@code nft -f} as one transaction:
 * all of it or none of it.
 *
 * <p>Scripts applied at the same time share one run (group commit): whoever finds no run under way
 * applies every script waiting, its own included, as one file, and the others return once their
 * script is in. One {@code nft} process costs ~10-30 ms here, and the kernel takes nftables
 * transactions one at a time anyway; with 50 creates and deletes at once, one run at a time per
 * script capped a host at ~14 sandbox lifecycles a second. A batch that fails is applied again
 * script by script, so each caller gets its own script's outcome (a failed script changes nothing).
 */
final class Nft {
    private static final Logger log = LoggerFactory.getLogger(Nft.class);
    private static final Pattern PACKETS = Pattern.compile("packets (\\d+)");

    private final Path binary = ToolRunner.locate("nft");
    private final Duration timeout;
    /** Held by the caller that runs nft for everyone waiting. */
    private final ReentrantLock applying = new ReentrantLock();
    private final Object queueLock = new Object();
    private List<Pending> waiting = new ArrayList<>(); // guarded by queueLock
    private final AtomicInteger runs = new AtomicInteger();

    Nft(Duration timeout) {
        this.timeout = timeout;
    }

    private record Pending(String step, String script, CompletableFuture<Void> done) {
    }

    /** Applies {@code script} atomically; {@code step} names it in errors ("open sbx_…"). */
    void apply(String step, String script) {
        var mine = new Pending(step, script, new CompletableFuture<>());
        synchronized (queueLock) {
            waiting.add(mine);
        }
        while (!mine.done().isDone()) {
            applying.lock();
            try {
                if (mine.done().isDone()) break; // the caller before applied it
                List<Pending> batch;
                synchronized (queueLock) {
                    batch = waiting;
                    waiting = new ArrayList<>();
                }
                applyAll(batch);
            } finally {
                applying.unlock();
            }
        }
        try {
            mine.done().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw e;
        }
    }

    private void applyAll(List<Pending> batch) {
        if (batch.size() > 1) {
            try {
                applyNow("batch of " + batch.size(), batch.stream().map(Pending::script).collect(Collectors.joining()), false);
                batch.forEach(p -> p.done().complete(null));
                return;
            } catch (RuntimeException e) {
                log.atDebug().addKeyValue("scripts", batch.size()).setCause(e).log("nft refused a batch; applying its scripts one by one");
            }
        }
        for (var p : batch) {
            try {
                applyNow(p.step(), p.script(), true);
                p.done().complete(null);
            } catch (RuntimeException e) {
                p.done().completeExceptionally(e);
            }
        }
    }

    /** How many times {@link #apply} ran nft (for tests: fewer than the scripts when they came together). */
    int runs() {
        return runs.get();
    }

    private void applyNow(String step, String script, boolean warnOnRefusal) {
        runs.incrementAndGet();
        try {
            // From standard input, not a file: a service killed meanwhile leaves nothing behind.
            var result = ToolRunner.run(List.of(binary.toString(), "-f", "/dev/stdin"), timeout, script.getBytes(StandardCharsets.UTF_8));
            if (result.exitCode() != 0) {
                if (warnOnRefusal) log.atWarn().addKeyValue("step", step).addKeyValue("script", script).log("nft refused a script");
                throw StasisException.runtimeFailed("-", "nft " + step, result.stderrTail(), null);
            }
        } catch (IOException | ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed("-", "nft " + step, e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed("-", "nft " + step, "interrupted", e);
        }
    }

    /** Whether the table exists. */
    boolean hasTable(String table) {
        return run("list", "table", "ip", table).exitCode() == 0;
    }

    /** The chain names of a table (empty if it does not exist). */
    List<String> chains(String table) {
        var result = run("list", "chains", "ip");
        if (result.exitCode() != 0) return List.of();
        var names = new ArrayList<String>();
        boolean inTable = false;
        for (String line : result.stdout()) {
            String l = line.strip();
            if (l.startsWith("table ")) inTable = l.equals("table ip " + table + " {");
            else if (inTable && l.startsWith("chain ")) names.add(l.substring(6, l.indexOf(' ', 6)));
        }
        return names;
    }

    /** The packet count of a named counter, 0 if it does not exist. */
    long counter(String table, String name) {
        var result = run("list", "counter", "ip", table, name);
        if (result.exitCode() != 0) return 0;
        Matcher m = PACKETS.matcher(result.stdoutText());
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private ToolRunner.Result run(String... args) {
        var argv = new ArrayList<>(List.of(binary.toString()));
        argv.addAll(List.of(args));
        try {
            return ToolRunner.run(argv, timeout);
        } catch (IOException | ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed("-", "nft " + String.join(" ", args), e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed("-", "nft", "interrupted", e);
        }
    }
}

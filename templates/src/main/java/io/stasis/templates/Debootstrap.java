package io.stasis.templates;

import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.Mounts;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs {@code debootstrap}. Its second stage mounts /proc, /sys (and more)
 * inside the target and does not always unmount them when it fails; {@link #bootstrap} unmounts
 * whatever is left below the target before it returns, success or not.
 */
final class Debootstrap {
    private static final Logger log = LoggerFactory.getLogger(Debootstrap.class);

    private final Path binary;
    private final Duration timeout;
    private final Mounts mounts;

    Debootstrap(Path binary, Duration timeout, Mounts mounts) {
        this.binary = binary;
        this.timeout = timeout;
        this.mounts = mounts;
    }

    /** 20 minutes: a bootstrap takes 45-80 s here, far longer on a slow mirror. */
    static Debootstrap fromSystem() {
        return new Debootstrap(ToolRunner.locate("debootstrap"), Duration.ofMinutes(20), Mounts.fromSystem());
    }

    boolean installed() {
        return Files.isExecutable(binary);
    }

    /** Bootstraps {@code suite} into the empty directory {@code target} from {@code mirror}. */
    void bootstrap(String suite, String variant, List<String> include, Path target, String mirror, TemplateRecipe.Progress progress) {
        String step = "debootstrap " + suite;
        if (!installed()) throw Failures.tool(step, "debootstrap is not installed (apt-get install debootstrap)");
        var argv = new ArrayList<String>(List.of(binary.toString(), "--variant=" + variant));
        if (!include.isEmpty()) argv.add("--include=" + String.join(",", include));
        argv.addAll(List.of(suite, target.toString(), mirror));
        var parser = new DebootstrapProgress();
        long start = System.nanoTime();
        log.atInfo().addKeyValue("argv", argv).log("debootstrap starting");
        try {
            // debootstrap reports (I:, W:, E:) on stdout, so errors quote the tail of both streams.
            var output = new ArrayDeque<String>();
            var result = ToolRunner.run(argv, timeout, line -> {
                synchronized (output) {
                    if (output.size() == ToolRunner.TAIL_LINES) output.removeFirst();
                    output.addLast(line);
                }
                parser.accept(line).ifPresent(s -> progress.report(s.fraction(), s.message()));
            });
            if (result.exitCode() != 0) {
                String tail;
                synchronized (output) {
                    tail = ToolRunner.tail(List.copyOf(output));
                }
                String logTail = logTail(target);
                throw Failures.tool(step, "exit " + result.exitCode() + ": " + tail + (logTail.isEmpty() ? "" : "\ndebootstrap.log: " + logTail),
                        Map.of("output", tail, "log", logTail, "mirror", mirror), null);
            }
            log.atInfo().addKeyValue("suite", suite).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("debootstrap done");
        } catch (IOException e) {
            throw Failures.tool(step, "cannot start " + binary + ": " + e.getMessage(), Map.of(), e);
        } catch (ToolRunner.TimedOut e) {
            throw Failures.tool(step, e.getMessage(), Map.of("mirror", mirror), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failures.tool(step, "interrupted", Map.of(), e);
        } finally {
            unmountLeftovers(target);
        }
    }

    private void unmountLeftovers(Path target) {
        try {
            var unmounted = mounts.unmountAllBelow(target);
            if (!unmounted.isEmpty()) log.atWarn().addKeyValue("mounts", unmounted).log("debootstrap left mounts behind; unmounted");
        } catch (IOException e) {
            throw Failures.tool("unmount below " + target, e.toString(), Map.of(), e);
        }
    }

    /** debootstrap's own log says which package script failed; stderr often only says "see the log". */
    private static String logTail(Path target) {
        Path file = target.resolve("debootstrap/debootstrap.log");
        try {
            if (!Files.isRegularFile(file)) return "";
            var lines = Files.readAllLines(file);
            return ToolRunner.tail(lines);
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}

package io.stasis.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The command line of {@code ./stasis bench}. Every iteration count has a default chosen so a full
 * run takes a few minutes on a 2-core machine; {@code --iterations-scale} multiplies them all.
 *
 * @param scale       multiplies every iteration count (rounded, at least 1; a warm-up of 0 stays 0)
 * @param only        scenarios to run; empty means all
 * @param json        where the JSON results go
 * @param counts      iteration counts before scaling
 * @param help        whether only the usage was asked for
 */
public record Options(double scale, Set<String> only, Path json, Counts counts, boolean help) {
    public static final List<String> SCENARIOS = List.of("create", "exec", "memory", "files", "floors");
    public static final Path DEFAULT_JSON = Path.of("bench/target/bench-results.json");

    public Options {
        only = Set.copyOf(only);
    }

    /**
     * Iteration counts of each series.
     *
     * @param create        create -> first output samples per template
     * @param exec          exec round trips of {@code true}
     * @param file1mb       1 MB writes and reads
     * @param file100mb     100 MB writes and reads
     * @param idleSandboxes idle sandboxes running while memory is read
     * @param floor         samples of each raw floor
     * @param warmup        uncounted iterations before each series (the 100 MB files take a fifth, at least 1)
     */
    public record Counts(int create, int exec, int file1mb, int file100mb, int idleSandboxes, int floor, int warmup) {
        public static Counts defaults() {
            return new Counts(30, 200, 30, 5, 50, 30, 10);
        }

        /** Warm-up of the 100 MB file series, whose iterations take seconds. */
        public int warmupOfSlowSeries() {
            return warmup == 0 ? 0 : Math.max(1, warmup / 5);
        }

        /** These counts multiplied by {@code scale}: rounded, never below 1 (a warm-up of 0 stays 0). */
        public Counts scaled(double scale) {
            return new Counts(at1(create, scale), at1(exec, scale), at1(file1mb, scale), at1(file100mb, scale),
                    at1(idleSandboxes, scale), at1(floor, scale), warmup == 0 ? 0 : at1(warmup, scale));
        }

        private static int at1(int n, double scale) {
            return (int) Math.max(1, Math.round(n * scale));
        }
    }

    /** Scaled counts: what the run actually does. */
    public Counts effective() {
        return counts.scaled(scale);
    }

    public boolean runs(String scenario) {
        return only.isEmpty() || only.contains(scenario);
    }

    /** Thrown for a bad command line; the message says what is wrong. */
    public static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    public static Options parse(String... args) {
        double scale = 1;
        var only = new LinkedHashSet<String>();
        Path json = DEFAULT_JSON;
        var c = Counts.defaults();
        boolean help = false;
        var rest = new ArrayList<>(List.of(args));
        while (!rest.isEmpty()) {
            String arg = rest.removeFirst();
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
                continue;
            }
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (!name.startsWith("--")) throw new UsageException("unexpected argument '" + arg + "'");
            if (value == null) {
                if (rest.isEmpty()) throw new UsageException(name + " needs a value");
                value = rest.removeFirst();
            }
            switch (name) {
                case "--iterations-scale" -> scale = positive(name, value);
                case "--only" -> only.addAll(scenarios(value));
                case "--json" -> json = Path.of(value);
                case "--create-n" -> c = new Counts(count(name, value, 1), c.exec(), c.file1mb(), c.file100mb(), c.idleSandboxes(), c.floor(), c.warmup());
                case "--exec-n" -> c = new Counts(c.create(), count(name, value, 1), c.file1mb(), c.file100mb(), c.idleSandboxes(), c.floor(), c.warmup());
                case "--file-1mb-n" -> c = new Counts(c.create(), c.exec(), count(name, value, 1), c.file100mb(), c.idleSandboxes(), c.floor(), c.warmup());
                case "--file-100mb-n" -> c = new Counts(c.create(), c.exec(), c.file1mb(), count(name, value, 1), c.idleSandboxes(), c.floor(), c.warmup());
                case "--idle-sandboxes" -> c = new Counts(c.create(), c.exec(), c.file1mb(), c.file100mb(), count(name, value, 1), c.floor(), c.warmup());
                case "--floor-n" -> c = new Counts(c.create(), c.exec(), c.file1mb(), c.file100mb(), c.idleSandboxes(), count(name, value, 1), c.warmup());
                case "--warmup" -> c = new Counts(c.create(), c.exec(), c.file1mb(), c.file100mb(), c.idleSandboxes(), c.floor(), count(name, value, 0));
                default -> throw new UsageException("unknown flag " + name);
            }
        }
        return new Options(scale, only, json, c, help);
    }

    private static List<String> scenarios(String value) {
        var names = new ArrayList<String>();
        for (String part : value.split(",")) {
            String s = part.strip();
            if (s.isEmpty()) continue;
            if (!SCENARIOS.contains(s))
                throw new UsageException("unknown scenario '" + s + "' in --only; known: " + String.join(",", SCENARIOS));
            names.add(s);
        }
        if (names.isEmpty()) throw new UsageException("--only needs at least one scenario: " + String.join(",", SCENARIOS));
        return names;
    }

    private static double positive(String flag, String value) {
        try {
            double d = Double.parseDouble(value);
            if (!(d > 0) || Double.isInfinite(d)) throw new NumberFormatException();
            return d;
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " must be a positive number, was '" + value + "'");
        }
    }

    private static int count(String flag, String value, int min) {
        try {
            int n = Integer.parseInt(value);
            if (n < min || n > 100_000) throw new NumberFormatException();
            return n;
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " must be an integer between " + min + " and 100000, was '" + value + "'");
        }
    }

    public static String usage() {
        var d = Counts.defaults();
        return """
                Usage: ./stasis bench [flags]   (or: java --enable-native-access=ALL-UNNAMED -jar bench/target/stasis-bench.jar [flags])
                Starts a private Stasis service on a scratch data directory (root needed), measures through the
                REST API with the SDK, prints a table on stdout and writes JSON. Progress goes to stderr.
                  --iterations-scale X  multiply every iteration count (e.g. 0.2 for a quick run; default 1)
                  --only a,b            run only these scenarios: %s
                  --json PATH           where to write the JSON (default %s)
                  --create-n N          create -> first output samples per template (default %d)
                  --exec-n N            exec round trips of `true` (default %d)
                  --file-1mb-n N        1 MB writes and reads (default %d)
                  --file-100mb-n N      100 MB writes and reads (default %d)
                  --idle-sandboxes N    idle tiny sandboxes for the memory figures (default %d)
                  --floor-n N           samples of each raw floor: runc run, btrfs snapshot, runc exec (default %d)
                  --warmup N            uncounted iterations before each series; 100 MB files take N/5, at least 1 (default %d)
                  --help                this text
                Percentiles are nearest-rank.
                """.formatted(String.join(",", SCENARIOS), DEFAULT_JSON, d.create(), d.exec(), d.file1mb(), d.file100mb(),
                d.idleSandboxes(), d.floor(), d.warmup());
    }
}

package io.stasis.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The command line of {@code ./stasis bench}. Every iteration count has a default chosen so a full
 * run takes a few minutes on a 2-core machine; {@code --iterations-scale} multiplies them all.
 *
 * @param scale       multiplies every iteration count (rounded, at least 1; a warm-up of 0 stays 0)
 * @param only        scenarios to run; empty means all
 * @param json        where the JSON results go
 * @param counts      iteration counts before scaling
 * @param maxSize     largest memory or root size the live-state scenarios use, bytes; larger sizes are skipped
 * @param outputSize  bytes a process writes for each output streaming sample (at most {@code maxSize})
 * @param followersInFlight streams the followers scenario may have requested and not yet seen open at once
 * @param blobRootSize the file tree whose two checkpoints the blob-dedup scenario stores, bytes (at most {@code maxSize})
 * @param blobDataSize what each blob-throughput sample stores and reads back, bytes (at most {@code maxSize})
 * @param runtimes    the runtimes of the sandboxes the scenarios make (the service's {@code --runtime}), one pass
 *                    and one private service each, in this order: runc, gvisor or both
 * @param help        whether only the usage was asked for
 */
public record Options(double scale, Set<String> only, Path json, Counts counts, long maxSize, long outputSize, int followersInFlight,
                      long blobRootSize, long blobDataSize, List<String> runtimes, boolean help) {
    public static final List<String> SCENARIOS = List.of("create", "exec", "memory", "files", "floors", "pause", "standby", "seed", "hibernate",
            "fork10", "checkpoint", "output", "output-latency", "file-watch", "followers", "preview", "egress", "blob-dedup",
            "blob-throughput", "blob-restore", "cli", "first-call", "lifecycles", "crowd", "templates", "nodes", "e2b");
    /**
     * What runs under {@code --runtime gvisor} (the lifecycle: the API's figures, without the floors
     * of runc and CRIU, which are not gVisor's). The others measure runc's or CRIU's own parts, or the
     * service beside its sandboxes whatever their runtime. fork10 runs its forks of 1 and 10 only
     * (see ForkTen).
     */
    public static final List<String> GVISOR_SCENARIOS = List.of("create", "exec", "memory", "pause", "standby", "hibernate", "fork10",
            "checkpoint");
    public static final Path DEFAULT_JSON = Path.of("bench/target/bench-results.json");
    /** The largest size any scenario uses (5 GiB written in a root). */
    public static final long DEFAULT_MAX_SIZE = 5L << 30;
    /** What a process writes for one output streaming sample: 200 MiB. */
    public static final long DEFAULT_OUTPUT_SIZE = 200L << 20;
    /** Streams opened at once by the followers scenario: below the service's accept backlog of 50. */
    public static final int DEFAULT_FOLLOWERS_IN_FLIGHT = 32;
    /** The root of 1 GB (1 GiB), changed by 1% between its two checkpoints. */
    public static final long DEFAULT_BLOB_ROOT_SIZE = 1L << 30;
    /** Mixed data per upload and restore sample: 256 MiB. */
    public static final long DEFAULT_BLOB_DATA_SIZE = 256L << 20;
    /** The blob data is held in memory, twice (the data and what is read back). */
    public static final long MAX_BLOB_DATA_SIZE = 1L << 30;

    public Options {
        only = Set.copyOf(only);
        runtimes = List.copyOf(runtimes);
        if (maxSize <= 0) throw new IllegalArgumentException("maxSize must be positive, was " + maxSize);
        if (outputSize <= 0) throw new IllegalArgumentException("outputSize must be positive, was " + outputSize);
        if (followersInFlight < 1) throw new IllegalArgumentException("followersInFlight must be positive, was " + followersInFlight);
        if (blobRootSize <= 0) throw new IllegalArgumentException("blobRootSize must be positive, was " + blobRootSize);
        if (blobDataSize <= 0 || blobDataSize > MAX_BLOB_DATA_SIZE)
            throw new IllegalArgumentException("blobDataSize must be positive and at most 1 GiB (held in memory), was " + blobDataSize);
    }

    /** The same options, writing the JSON elsewhere. */
    public Options withJson(Path file) {
        return new Options(scale, only, file, counts, maxSize, outputSize, followersInFlight, blobRootSize, blobDataSize, runtimes, help);
    }

    /**
     * Iteration counts of each series.
     *
     * @param create        create -> first output samples per template
     * @param exec          exec round trips of {@code true}
     * @param file1mb       1 MB writes and reads
     * @param file100mb     100 MB writes and reads
     * @param idleSandboxes idle sandboxes running while memory is read
     * @param floor         samples of each raw floor (the CRIU floors take {@code hibernate})
     * @param pause         pause and resume calls, freezer writes, runc pause/resume
     * @param hibernate     hibernate + resume cycles per memory size, and samples of each CRIU floor
     * @param checkpoint    checkpoints without memory, and forks from one, per root size
     * @param fork10        forks of 10 from a memory checkpoint
     * @param forkMany      the sandboxes of the one fork of many (and of its spares), issue 14's hundred
     * @param output        output streams of {@code outputSize} bytes timed, followed and through exec each
     * @param outputLatency lines timed from a write to their arrival on an output stream, per figure
     * @param fileEvents    files written and touched, each timed until its event arrives on a watch
     * @param followers     output streams held open at once
     * @param preview       GETs timed each way (through a preview, direct) per server; throughput rounds are a hundredth (2-10)
     * @param egress        HTTPS downloads timed each way (through the egress proxy, direct)
     * @param blob          uploads and restores timed per content store backend (local, S3) and chunk size; restores on a fresh instance
     * @param cli           CLI calls timed as whole processes, per figure
     * @param lifecycles    create -> exec -> delete lifecycles run under load (50 at a time)
     * @param crowd         tiny sandboxes left running at once while others come and go
     * @param crowdProbes   GETs and execs each, timed on members of the crowd meanwhile
     * @param warmup        uncounted iterations before each series (slow series take a fifth, at least 1)
     */
    public record Counts(int create, int exec, int file1mb, int file100mb, int idleSandboxes, int floor, int pause,
                         int hibernate, int checkpoint, int fork10, int forkMany, int output, int outputLatency, int fileEvents, int followers,
                         int preview, int egress, int blob, int cli, int lifecycles, int crowd, int crowdProbes, int warmup) {
        public static Counts defaults() {
            return new Counts(30, 200, 30, 5, 50, 30, 50, 5, 10, 3, 100, 3, 200, 200, 1000, 500, 10, 3, 20, 1000, 200, 500, 10);
        }

        /** Warm-up of the series whose iterations take seconds (100 MB files, CRIU). */
        public int warmupOfSlowSeries() {
            return warmup == 0 ? 0 : Math.max(1, warmup / 5);
        }

        /** These counts multiplied by {@code scale}: rounded, never below 1 (a warm-up of 0 stays 0). */
        public Counts scaled(double scale) {
            return new Counts(at1(create, scale), at1(exec, scale), at1(file1mb, scale), at1(file100mb, scale),
                    at1(idleSandboxes, scale), at1(floor, scale), at1(pause, scale), at1(hibernate, scale),
                    at1(checkpoint, scale), at1(fork10, scale), at1(forkMany, scale), at1(output, scale), at1(outputLatency, scale),
                    at1(fileEvents, scale), at1(followers, scale), at1(preview, scale), at1(egress, scale), at1(blob, scale),
                    at1(cli, scale), at1(lifecycles, scale), at1(crowd, scale), at1(crowdProbes, scale), warmup == 0 ? 0 : at1(warmup, scale));
        }

        private static int at1(int n, double scale) {
            return (int) Math.max(1, Math.round(n * scale));
        }
    }

    /** Scaled counts: what the run actually does. */
    public Counts effective() {
        return counts.scaled(scale);
    }

    /** Whether a pass of the run runs {@code scenario}. */
    public boolean runs(String scenario) {
        return runtimes.stream().anyMatch(runtime -> runs(scenario, runtime));
    }

    /** Whether the pass of {@code runtime} runs {@code scenario}. */
    public boolean runs(String scenario, String runtime) {
        if (runtime.equals("gvisor") && !GVISOR_SCENARIOS.contains(scenario)) return false;
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
        var d = Counts.defaults();
        int create = d.create(), exec = d.exec(), file1mb = d.file1mb(), file100mb = d.file100mb();
        int idle = d.idleSandboxes(), floor = d.floor(), pause = d.pause(), hibernate = d.hibernate();
        int checkpoint = d.checkpoint(), fork10 = d.fork10(), forkMany = d.forkMany(), warmup = d.warmup();
        int output = d.output(), outputLatency = d.outputLatency(), fileEvents = d.fileEvents(), followers = d.followers();
        int preview = d.preview(), egress = d.egress(), blob = d.blob(), cli = d.cli(), lifecycles = d.lifecycles();
        int crowd = d.crowd(), crowdProbes = d.crowdProbes();
        long blobRootSize = DEFAULT_BLOB_ROOT_SIZE;
        long blobDataSize = DEFAULT_BLOB_DATA_SIZE;
        long maxSize = DEFAULT_MAX_SIZE;
        long outputSize = DEFAULT_OUTPUT_SIZE;
        int followersInFlight = DEFAULT_FOLLOWERS_IN_FLIGHT;
        List<String> runtimes = List.of("runc");
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
                case "--max-size" -> maxSize = size(name, value);
                case "--runtime" -> runtimes = runtimes(value);
                case "--create-n" -> create = count(name, value, 1);
                case "--exec-n" -> exec = count(name, value, 1);
                case "--file-1mb-n" -> file1mb = count(name, value, 1);
                case "--file-100mb-n" -> file100mb = count(name, value, 1);
                case "--idle-sandboxes" -> idle = count(name, value, 1);
                case "--floor-n" -> floor = count(name, value, 1);
                case "--pause-n" -> pause = count(name, value, 1);
                case "--hibernate-n" -> hibernate = count(name, value, 1);
                case "--checkpoint-n" -> checkpoint = count(name, value, 1);
                case "--fork10-n" -> fork10 = count(name, value, 1);
                case "--fork-many" -> forkMany = count(name, value, 1);
                case "--output-n" -> output = count(name, value, 1);
                case "--output-size" -> outputSize = size(name, value);
                case "--latency-n" -> outputLatency = count(name, value, 1);
                case "--file-event-n" -> fileEvents = count(name, value, 1);
                case "--followers" -> followers = count(name, value, 1);
                case "--followers-in-flight" -> followersInFlight = count(name, value, 1);
                case "--preview-n" -> preview = count(name, value, 1);
                case "--egress-n" -> egress = count(name, value, 1);
                case "--blob-n" -> blob = count(name, value, 1);
                case "--cli-n" -> cli = count(name, value, 1);
                case "--lifecycles-n" -> lifecycles = count(name, value, 1);
                case "--crowd" -> crowd = count(name, value, 1);
                case "--crowd-probes" -> crowdProbes = count(name, value, 1);
                case "--blob-root-size" -> blobRootSize = size(name, value);
                case "--blob-data-size" -> {
                    blobDataSize = size(name, value);
                    if (blobDataSize > MAX_BLOB_DATA_SIZE) throw new UsageException(name + " must be at most 1G (held in memory), was '" + value + "'");
                }
                case "--warmup" -> warmup = count(name, value, 0);
                default -> throw new UsageException("unknown flag " + name);
            }
        }
        if (runtimes.equals(List.of("gvisor"))) {
            var refused = only.stream().filter(s -> !GVISOR_SCENARIOS.contains(s)).toList();
            if (!refused.isEmpty())
                throw new UsageException("--runtime gvisor runs only " + String.join(",", GVISOR_SCENARIOS) + ", not " + String.join(",", refused)
                        + " (they time runc's and CRIU's floors on the sandbox's own bundle)");
        }
        var counts = new Counts(create, exec, file1mb, file100mb, idle, floor, pause, hibernate, checkpoint, fork10, forkMany, output,
                outputLatency, fileEvents, followers, preview, egress, blob, cli, lifecycles, crowd, crowdProbes, warmup);
        return new Options(scale, only, json, counts, maxSize, outputSize, followersInFlight, blobRootSize, blobDataSize, runtimes, help);
    }

    private static List<String> runtimes(String value) {
        return switch (value) {
            case "runc", "gvisor" -> List.of(value);
            case "both" -> List.of("runc", "gvisor");
            default -> throw new UsageException("--runtime must be runc, gvisor or both, was '" + value + "'");
        };
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

    /** Bytes, or with a K, M or G suffix (powers of 1024): {@code 100M}, {@code 5G}. */
    static long size(String flag, String value) {
        String v = value.strip().toUpperCase(Locale.ROOT);
        int shift = switch (v.isEmpty() ? ' ' : v.charAt(v.length() - 1)) {
            case 'K' -> 10;
            case 'M' -> 20;
            case 'G' -> 30;
            default -> 0;
        };
        String digits = shift == 0 ? v : v.substring(0, v.length() - 1);
        try {
            long n = Long.parseLong(digits);
            if (n <= 0 || n > (Long.MAX_VALUE >> shift)) throw new NumberFormatException();
            return n << shift;
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " must be a positive size such as 100M or 5G, was '" + value + "'");
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
                  --max-size SIZE       skip memory and root sizes above SIZE (e.g. 100M; default 5G: all)
                  --runtime NAME        the scenarios' sandboxes run under NAME: runc (default), gvisor
                                        (only %s), or both: runc's pass, then gVisor's
                                        (its figures named gvisor.*), and the two side by side
                  --create-n N          create -> first output samples per template (default %d)
                  --exec-n N            exec round trips of `true` (default %d)
                  --file-1mb-n N        1 MB writes and reads (default %d)
                  --file-100mb-n N      100 MB writes and reads (default %d)
                  --idle-sandboxes N    idle tiny sandboxes for the memory figures (default %d)
                  --floor-n N           samples of each raw floor: runc run, btrfs snapshot, runc exec (default %d)
                  --pause-n N           pause and resume calls, freezer writes, runc pause/resume (default %d)
                  --hibernate-n N       hibernate + resume cycles per memory size, and samples of each CRIU floor (default %d)
                  --checkpoint-n N      checkpoints without memory, and forks from one, per root size (default %d)
                  --fork10-n N          forks of 10 sandboxes from a memory checkpoint (default %d)
                  --fork-many N         the sandboxes of the one fork of many, with and without spares (default %d)
                  --output-n N          output streams timed, followed and through exec each (default %d)
                  --output-size SIZE    what a process writes per output stream (default 200M; at most --max-size)
                  --latency-n N         lines timed from their write to their arrival on the stream, per figure (default %d)
                  --file-event-n N      files written and touched, each timed until its watch event (default %d)
                  --followers N         output streams held open at once (default %d)
                  --followers-in-flight N  of those, how many may be opening at once (default %d; as many as
                                        --followers: all requested at once)
                  --preview-n N         GETs timed each way, through a preview and direct, per server (default %d;
                                        throughput rounds: N/100, 2 to 10)
                  --egress-n N          HTTPS downloads timed each way, through the egress proxy and direct (default %d)
                  --blob-n N            uploads and restores timed per blob backend, local and S3, and per
                                        chunk size; restores of the 1 GiB sandbox on a fresh instance (default %d)
                  --blob-root-size SIZE the file tree checkpointed twice by blob-dedup (default 1G; at most --max-size)
                  --blob-data-size SIZE mixed data per blob upload and restore sample (default 256M; at most --max-size
                                        and 1G)
                  --cli-n N             CLI calls timed as whole processes, per figure (default %d)
                  --lifecycles-n N      create -> exec -> delete lifecycles, 50 at a time (default %d)
                  --crowd N             tiny sandboxes left running at once while others come and go (default %d)
                  --crowd-probes N      GETs and execs each, timed on the crowd's sandboxes meanwhile (default %d)
                  --warmup N            uncounted iterations before each series; slow ones (100 MB files, CRIU)
                                        take N/5, at least 1 (default %d)
                  --help                this text
                Percentiles are nearest-rank.
                """.formatted(String.join(",", SCENARIOS), DEFAULT_JSON, String.join(",", GVISOR_SCENARIOS), d.create(), d.exec(), d.file1mb(), d.file100mb(),
                d.idleSandboxes(), d.floor(), d.pause(), d.hibernate(), d.checkpoint(), d.fork10(), d.forkMany(), d.output(), d.outputLatency(),
                d.fileEvents(), d.followers(), DEFAULT_FOLLOWERS_IN_FLIGHT, d.preview(), d.egress(), d.blob(), d.cli(), d.lifecycles(), d.crowd(), d.crowdProbes(), d.warmup());
    }
}

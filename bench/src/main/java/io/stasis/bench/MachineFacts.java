package io.stasis.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * The machine a run happened on, read at its start.
 *
 * @param kernel         {@code uname -r}
 * @param cpuModel       the first {@code model name} of /proc/cpuinfo
 * @param cores          processors available to this JVM
 * @param memTotalBytes  MemTotal
 * @param loadAverage    1, 5 and 15 minute load averages at the start
 * @param startedAt      when the run began (UTC)
 * @param java           the JVM's version
 */
public record MachineFacts(String kernel, String cpuModel, int cores, long memTotalBytes, List<Double> loadAverage,
                           Instant startedAt, String java) {
    public MachineFacts {
        loadAverage = List.copyOf(loadAverage);
    }

    static MachineFacts gather() {
        return new MachineFacts(read("/proc/sys/kernel/osrelease").strip(), readCpuModel(), Runtime.getRuntime().availableProcessors(),
                HostMemory.total(), readLoadAverage(), Instant.now(), Runtime.version().toString());
    }

    private static List<Double> readLoadAverage() {
        String[] fields = read("/proc/loadavg").strip().split("\\s+");
        return Arrays.stream(fields, 0, 3).map(Double::valueOf).toList();
    }

    private static String readCpuModel() {
        return read("/proc/cpuinfo").lines().filter(l -> l.startsWith("model name")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("unknown");
    }

    private static String read(String file) {
        try {
            return Files.readString(Path.of(file));
        } catch (IOException e) {
            return "unknown";
        }
    }
}

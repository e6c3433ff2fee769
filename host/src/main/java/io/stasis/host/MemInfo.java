package io.stasis.host;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** The host's memory as {@code /proc/meminfo} reports it. */
public final class MemInfo {
    private static final Path FILE = Path.of("/proc/meminfo");

    private MemInfo() {
    }

    /** Every field, in bytes where the kernel gives kB (counts such as {@code HugePages_Total} as they are). */
    public static Map<String, Long> read() {
        var fields = new LinkedHashMap<String, Long>();
        try {
            for (String line : Files.readAllLines(FILE)) {
                int colon = line.indexOf(':');
                if (colon < 0) continue;
                String[] parts = line.substring(colon + 1).strip().split("\\s+");
                long value = Long.parseLong(parts[0]);
                fields.put(line.substring(0, colon), parts.length > 1 && parts[1].equals("kB") ? value * 1024 : value);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + FILE, e);
        }
        return fields;
    }
}

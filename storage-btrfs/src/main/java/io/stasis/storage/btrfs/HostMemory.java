package io.stasis.storage.btrfs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What /proc/meminfo says about data waiting to be written. */
final class HostMemory {
    private HostMemory() {
    }

    /** Dirty page-cache bytes on the whole host ({@code Dirty:}); 0 if unreadable. */
    static long dirtyBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("Dirty:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }
}

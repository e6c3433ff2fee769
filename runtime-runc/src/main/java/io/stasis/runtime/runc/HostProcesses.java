package io.stasis.runtime.runc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the host's /proc says about a process, by host pid. */
final class HostProcesses {
    private HostProcesses() {
    }

    /** Whether the process exists and has not ended (a zombie has ended; only its parent has yet to reap it). */
    static boolean isAlive(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int close = stat.lastIndexOf(')');
            return close > 0 && close + 2 < stat.length() && stat.charAt(close + 2) != 'Z' && stat.charAt(close + 2) != 'X';
        } catch (IOException e) {
            return false;
        }
    }
}

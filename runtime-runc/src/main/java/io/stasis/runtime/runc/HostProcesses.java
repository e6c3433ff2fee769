package io.stasis.runtime.runc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;

/** What the host's /proc says about a process, by host pid. */
final class HostProcesses {
    private HostProcesses() {
    }

    /** How many sockets the process holds open (its fd table's {@code socket:[...]} entries); 0 if it is gone. */
    static int socketCount(long pid) {
        Path fds = Path.of("/proc", Long.toString(pid), "fd");
        try (var entries = Files.list(fds)) {
            int count = 0;
            for (Path fd : entries.toList()) {
                try {
                    if (Files.readSymbolicLink(fd).toString().startsWith("socket:")) count++;
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
            return count;
        } catch (IOException e) {
            return 0;
        }
    }

    /** The process's argv, empty if it is gone (or a kernel thread). */
    static List<String> commandLine(long pid) {
        try {
            byte[] bytes = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            var out = new ArrayList<String>();
            int start = 0;
            for (int i = 0; i < bytes.length; i++) {
                if (bytes[i] != 0) continue;
                out.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
            return out;
        } catch (IOException e) {
            return List.of();
        }
    }

    /** Whether the process is in the cgroup {@code path} (e.g. {@code /stasis/<sandbox id>}) of some controller: not a reused pid. */
    static boolean inCgroup(long pid, String path) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(pid), "cgroup")).lines().anyMatch(line -> line.endsWith(":" + path));
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether the process exists and has not ended (a zombie has ended; only its parent has yet to reap it). */
    static boolean isAlive(long pid) {
        try {
            char state = state(pid);
            return state != '?' && state != 'Z' && state != 'X';
        } catch (IOException e) {
            return false;
        }
    }

    /** The state letter of {@code /proc/<pid>/stat} ({@code R}, {@code S}, {@code D}, {@code Z}, ...), {@code ?} if unreadable. */
    private static char state(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        int close = stat.lastIndexOf(')');
        return close > 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
    }

    /**
     * The process's state letter and the kernel function it waits in, as {@code "S in do_sys_poll"}:
     * what a process that should answer is doing instead (a frozen one waits in the freezer).
     */
    static String describe(long pid) {
        try {
            char state = state(pid);
            String wchan = Files.readString(Path.of("/proc", Long.toString(pid), "wchan")).strip();
            return state + (wchan.isEmpty() || wchan.equals("0") ? "" : " in " + wchan);
        } catch (IOException e) {
            return "gone";
        }
    }

    /** Waits, up to {@code timeout}, until the process has ended. */
    static void awaitEnd(long pid, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pauseNanos = 100_000;
        while (isAlive(pid) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(pauseNanos);
            pauseNanos = Math.min(pauseNanos * 2, 10_000_000);
        }
    }

    /** Pids of the host's processes that {@code test} accepts (a process that ends meanwhile may be among them). */
    static List<Long> matching(LongPredicate test) {
        var pids = new ArrayList<Long>();
        try (var entries = Files.list(Path.of("/proc"))) {
            for (Path proc : entries.toList()) {
                String name = proc.getFileName().toString();
                if (name.chars().allMatch(Character::isDigit) && test.test(Long.parseLong(name))) pids.add(Long.parseLong(name));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pids;
    }

    /** Pids of processes whose command line starts with {@code argv}. */
    static List<Long> running(List<String> argv) {
        return matching(pid -> {
            List<String> line = commandLine(pid);
            return line.size() >= argv.size() && line.subList(0, argv.size()).equals(argv);
        });
    }

    /** Pids of live processes named {@code comm} (the kernel's name, /proc/<pid>/comm) holding a descriptor on {@code dir} or below. */
    static List<Long> holding(String comm, Path dir) {
        return matching(pid -> {
            try {
                return Files.readString(Path.of("/proc", Long.toString(pid), "comm")).strip().equals(comm) && holds(pid, dir);
            } catch (IOException e) {
                return false; // ended meanwhile
            }
        }).stream().filter(HostProcesses::isAlive).toList();
    }

    /** Whether the process holds a descriptor on {@code dir} or below (false once it has ended). */
    static boolean holds(long pid, Path dir) {
        try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    if (Path.of(Files.readSymbolicLink(fd).toString()).startsWith(dir)) return true;
                } catch (IOException | InvalidPathException e) {
                    // closed meanwhile, or not a path
                }
            }
            return false;
        } catch (IOException e) {
            return false; // ended
        }
    }
}

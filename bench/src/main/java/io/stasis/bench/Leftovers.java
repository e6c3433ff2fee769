package io.stasis.bench;

import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a benchmark run could leave on the host: mounts and loop devices of its scratch directory,
 * cgroups and live processes of the sandboxes and floor containers it made, a service's nftables
 * table and link interfaces. It must leave none.
 */
final class Leftovers {
    private static final Path CGROUP_FS = Path.of("/sys/fs/cgroup");

    private Leftovers() {
    }

    /** A description of each thing left; empty when the host is clean. */
    static List<String> find(Path scratch, Collection<String> cgroupPaths, Collection<String> containerIds) {
        var left = new ArrayList<String>();
        left.addAll(mountsUnder(scratch));
        left.addAll(loopDevicesBackedBy(scratch));
        left.addAll(cgroups(cgroupPaths));
        left.addAll(liveProcessesOf(containerIds));
        return left;
    }

    /**
     * The service's nftables table and its sandboxes' link interfaces ({@code <prefix>} and a
     * digit), which the service removes when it stops with no sandbox left.
     */
    static List<String> networkOf(String table, String interfacePrefix) {
        var out = new ArrayList<String>();
        HostLeaks.nftTables(table).stream().filter(table::equals).forEach(t -> out.add("nftables table " + t));
        HostLeaks.interfaces(interfacePrefix).stream()
                .filter(n -> n.length() > interfacePrefix.length() && Character.isDigit(n.charAt(interfacePrefix.length())))
                .forEach(n -> out.add("interface " + n));
        return out;
    }

    static List<String> mountsUnder(Path dir) {
        return HostLeaks.mountsUnder(dir).stream().map(mountPoint -> "mount " + mountPoint).toList();
    }

    static List<String> loopDevicesBackedBy(Path dir) {
        return HostLeaks.loopDevicesBackedBy(dir).stream().map(device -> "loop device " + device).toList();
    }

    /** Cgroup directories (relative paths such as {@code /stasis/sbx_x}) still present in any controller. */
    static List<String> cgroups(Collection<String> cgroupPaths) {
        var out = new ArrayList<String>();
        try (Stream<Path> controllers = Files.list(CGROUP_FS)) {
            for (Path controller : controllers.filter(Files::isDirectory).toList()) {
                for (String path : cgroupPaths) {
                    Path dir = controller.resolve(path.replaceFirst("^/", ""));
                    if (Files.isDirectory(dir)) out.add("cgroup " + dir);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** Live (not zombie) processes in a cgroup named after one of these ids. */
    static List<String> liveProcessesOf(Collection<String> ids) {
        var out = new ArrayList<String>();
        for (String id : ids) {
            for (long pid : HostMemory.processesOf(id)) {
                if (!isZombie(pid)) out.add("process " + pid + " of " + id);
            }
        }
        return out;
    }

    /** A zombie holds only its pid until the host's process 1 reaps it, which may take a moment. */
    private static boolean isZombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            int close = stat.lastIndexOf(')');
            return close > 0 && close + 2 < stat.length() && stat.charAt(close + 2) == 'Z';
        } catch (IOException e) {
            return true; // gone already
        }
    }
}

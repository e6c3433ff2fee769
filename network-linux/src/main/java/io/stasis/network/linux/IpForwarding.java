package io.stasis.network.linux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * IPv4 forwarding, which sandbox networks need, shared by every Stasis instance on the host. Each
 * instance that relies on it holds a file named after its table in {@value #DIR}; whoever found it
 * off leaves a {@code .was-off} mark, and the last instance to let go turns it back off. /run is
 * emptied at boot, as forwarding is reset.
 */
final class IpForwarding {
    static final String DIR = "/run/stasis/ip-forward";
    private static final Path SYSCTL = Path.of("/proc/sys/net/ipv4/ip_forward");
    private static final String WAS_OFF = ".was-off";

    private final Path dir;
    private final Path sysctl;

    IpForwarding() {
        this(Path.of(DIR), SYSCTL);
    }

    IpForwarding(Path dir, Path sysctl) {
        this.dir = dir;
        this.sysctl = sysctl;
    }

    /** Turns forwarding on (if off) on behalf of {@code owner}. */
    synchronized void require(String owner) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve(owner), "");
            if (!Files.readString(sysctl).strip().equals("1")) {
                Files.writeString(dir.resolve(WAS_OFF), "");
                Files.writeString(sysctl, "1\n");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("turning IPv4 forwarding on (" + sysctl + ")", e);
        }
    }

    /** {@code owner} no longer needs forwarding; if no instance does and it was off before, it is turned off. */
    synchronized void release(String owner) {
        try {
            Files.deleteIfExists(dir.resolve(owner));
            if (!Files.exists(dir.resolve(WAS_OFF))) return;
            try (Stream<Path> owners = Files.list(dir)) {
                if (owners.anyMatch(p -> !p.getFileName().toString().equals(WAS_OFF))) return;
            }
            Files.writeString(sysctl, "0\n");
            Files.delete(dir.resolve(WAS_OFF));
        } catch (IOException e) {
            throw new UncheckedIOException("giving IPv4 forwarding back (" + sysctl + ")", e);
        }
    }
}

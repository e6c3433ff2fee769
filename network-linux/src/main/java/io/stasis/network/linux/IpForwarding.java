package io.stasis.network.linux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * IPv4 forwarding, which sandbox networks need, shared by every Stasis instance on the host. Each
 * instance that relies on it holds a file named after its table in {@value #DIR}; whoever found it
 * off leaves a {@code .was-off} mark, and the last instance to let go turns it back off. /run is
 * emptied at boot, as forwarding is reset.
 *
 * <p>An instance killed for good (never started again on its table) leaves its file behind, which
 * would keep forwarding on forever. So a release counts only owners still alive: an instance makes
 * its table before it claims forwarding and drops it before letting go, so an owner whose table is
 * gone is dead, and its file is removed.
 */
final class IpForwarding {
    private static final Logger log = LoggerFactory.getLogger(IpForwarding.class);
    static final String DIR = "/run/stasis/ip-forward";
    private static final Path SYSCTL = Path.of("/proc/sys/net/ipv4/ip_forward");
    private static final String WAS_OFF = ".was-off";

    private final Path dir;
    private final Path sysctl;
    private final Predicate<String> alive;

    /** @param alive whether the instance of this table still runs (its nftables table exists) */
    IpForwarding(Predicate<String> alive) {
        this(Path.of(DIR), SYSCTL, alive);
    }

    IpForwarding(Path dir, Path sysctl, Predicate<String> alive) {
        this.dir = dir;
        this.sysctl = sysctl;
        this.alive = alive;
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
            List<Path> others;
            try (Stream<Path> owners = Files.list(dir)) {
                others = owners.filter(p -> !p.getFileName().toString().equals(WAS_OFF)).toList();
            }
            boolean anyAlive = false;
            for (Path other : others) {
                if (alive.test(other.getFileName().toString())) {
                    anyAlive = true;
                } else {
                    log.atWarn().addKeyValue("owner", other.getFileName()).log("removing the IPv4 forwarding claim of an instance that is gone");
                    Files.deleteIfExists(other);
                }
            }
            if (anyAlive) return;
            Files.writeString(sysctl, "0\n");
            Files.delete(dir.resolve(WAS_OFF));
        } catch (IOException e) {
            throw new UncheckedIOException("giving IPv4 forwarding back (" + sysctl + ")", e);
        }
    }
}

package io.stasis.testkit;

import io.stasis.host.HostClaim;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A host for tests to talk to, in a network namespace of its own: a veth to the host's namespace,
 * {@code 10.254.N.2/30} inside and {@code .1} on the host, a default route back through the host.
 * Servers started with {@link #serve} run inside it. Closing ends them (by their pid) and removes
 * the namespace and the veth. All traffic stays on this machine.
 */
public final class TestNetnsHost implements AutoCloseable {
    private final String namespace;
    private final String hostInterface;
    private final String address;
    private final String hostAddress;
    private final List<Process> servers = new ArrayList<>();
    /** Its {@code 10.254.n.0/30}, held while it lives: test JVMs run side by side. */
    private final HostClaim slot;

    private static final int SLOTS = 250;

    private TestNetnsHost(int n, HostClaim slot) {
        this.slot = slot;
        String tag = Integer.toString(n, 36) + Long.toString(ThreadLocalRandom.current().nextLong(36 * 36), 36);
        this.namespace = "stasis-th-" + tag;
        this.hostInterface = "sth" + tag;
        this.address = "10.254." + n + ".2";
        this.hostAddress = "10.254." + n + ".1";
    }

    /**
     * A namespace on the first {@code 10.254.n.0/30} from a random {@code n} that no live test host
     * holds, in this JVM or another.
     */
    public static TestNetnsHost createAny() {
        int first = ThreadLocalRandom.current().nextInt(SLOTS);
        for (int i = 0; i < SLOTS; i++) {
            int n = 1 + (first + i) % SLOTS;
            if (claim(n) instanceof HostClaim.Result.Claimed(HostClaim slot)) return create(n, slot);
        }
        throw new IllegalStateException("every test host address 10.254.1-" + SLOTS + ".0/30 is held on this host");
    }

    /** A namespace on {@code 10.254.n.0/30}; {@code n} in 1..250, one per test host alive at once. */
    public static TestNetnsHost create(int n) {
        return switch (claim(n)) {
            case HostClaim.Result.Claimed(HostClaim slot) -> create(n, slot);
            case HostClaim.Result.Taken(String holder) -> throw new IllegalStateException("10.254." + n + ".0/30 is held by " + holder);
        };
    }

    private static HostClaim.Result claim(int n) {
        return HostClaim.take(HostClaim.HOST_DIR, "test-host", Integer.toString(n), "a test host of process " + ProcessHandle.current().pid());
    }

    private static TestNetnsHost create(int n, HostClaim slot) {
        var host = new TestNetnsHost(n, slot);
        try {
            host.ip("netns", "add", host.namespace);
            host.ip("link", "add", host.hostInterface, "type", "veth", "peer", "name", "eth0", "netns", host.namespace);
            host.ip("addr", "add", host.hostAddress + "/30", "dev", host.hostInterface);
            host.ip("link", "set", host.hostInterface, "up");
            host.ip("-n", host.namespace, "addr", "add", host.address + "/30", "dev", "eth0");
            host.ip("-n", host.namespace, "link", "set", "eth0", "up");
            host.ip("-n", host.namespace, "link", "set", "lo", "up");
            host.ip("-n", host.namespace, "route", "add", "default", "via", host.hostAddress);
            return host;
        } catch (RuntimeException e) {
            host.close();
            throw e;
        }
    }

    /** Its address, as sandboxes reach it. */
    public String address() {
        return address;
    }

    /** The host end's address (what it sees as the source of NATed sandbox traffic). */
    public String hostAddress() {
        return hostAddress;
    }

    /**
     * Starts {@code argv} inside the namespace, in {@code dir}; it is ended by {@link #close}. It
     * enters the network namespace only: {@code ip netns exec} gives it a mount namespace of its own,
     * a copy of every mount on the host, and where mounts do not propagate (a private root, as on
     * these machines) that copy keeps another test's pool, unmounted on the host meanwhile, and its
     * loop device busy until the server ends.
     */
    public Process serve(Path dir, String... argv) {
        var command = inNamespace(argv);
        try {
            var process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            servers.add(process);
            return process;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until something listens on {@code port} inside the namespace. */
    public void awaitListening(int port) {
        Await.until("port " + port + " listening in " + namespace, Duration.ofSeconds(15),
                () -> run(inNamespace("grep", "-qi", String.format(":%04X 00000000:0000 0A", port), "/proc/net/tcp").toArray(String[]::new)).exit() == 0);
    }

    /** {@code argv} run in the namespace's network only, in the host's mount namespace (see {@link #serve}). */
    private List<String> inNamespace(String... argv) {
        var command = new ArrayList<>(List.of("nsenter", "--net=/run/netns/" + namespace, "--"));
        command.addAll(List.of(argv));
        return command;
    }

    private void ip(String... args) {
        var argv = new ArrayList<>(List.of("ip"));
        argv.addAll(List.of(args));
        var result = run(argv.toArray(String[]::new));
        if (result.exit() != 0) throw new IllegalStateException(String.join(" ", argv) + ": " + result.output());
    }

    private record Ran(int exit, String output) {
    }

    private static Ran run(String... argv) {
        try {
            var process = new ProcessBuilder(argv).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes());
            return new Ran(process.waitFor(), output);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        for (var server : servers) {
            server.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            server.destroyForcibly();
            try {
                server.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        run("ip", "link", "del", hostInterface);
        run("ip", "netns", "del", namespace);
        slot.close();
    }
}

package io.stasis.network.linux.proxy;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The proxy's world in miniature, all on this machine: a "client" network namespace (the sandbox)
 * and an "upstream" one (the internet), each on a veth to the host, and an nftables table of its
 * own that redirects the client's ports 80 and 443 to the proxy. Every name carries a random label,
 * and {@link #close} removes everything created, in reverse order, even after a partial setup.
 */
final class TestNetwork implements AutoCloseable {
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(20);

    final String label = HexFormat.of().toHexDigits((byte) ThreadLocalRandom.current().nextInt())
            + HexFormat.of().toHexDigits((byte) ThreadLocalRandom.current().nextInt());
    final String clientNs = "stasis-t-" + label + "-c";
    final String upstreamNs = "stasis-t-" + label + "-u";
    final String clientVeth = "st" + label + "c";
    final String upstreamVeth = "st" + label + "u";
    final String nftTable = "stasis_t_" + label;
    private final int clientNet = ThreadLocalRandom.current().nextInt(0, 128);
    private final int upstreamNet = 128 + ThreadLocalRandom.current().nextInt(0, 128);
    private final Deque<Step> undo = new ArrayDeque<>();

    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    /** The sandbox side: its address, and the host's on the same veth. */
    InetAddress clientAddress() {
        return ip("10.254." + clientNet + ".2");
    }

    InetAddress clientGateway() {
        return ip("10.254." + clientNet + ".1");
    }

    /** The real server for the allowed name. */
    InetAddress origin() {
        return ip("10.254." + upstreamNet + ".2");
    }

    /** An attacker's server, in the same namespace, that answers any name. */
    InetAddress attacker() {
        return ip("10.254." + upstreamNet + ".3");
    }

    void create(int httpPort, int tlsPort) throws Exception {
        netns(clientNs);
        netns(upstreamNs);
        veth(clientVeth, clientNs, clientNet, 30, List.of(clientAddress()));
        veth(upstreamVeth, upstreamNs, upstreamNet, 29, List.of(origin(), attacker()));
        Path rules = Files.createTempFile("stasis-t-" + label, ".nft");
        try {
            Files.writeString(rules, """
                    table ip %1$s {
                        chain prerouting {
                            type nat hook prerouting priority dstnat;
                            iifname "%2$s" tcp dport 80 redirect to :%3$d
                            iifname "%2$s" tcp dport 443 redirect to :%4$d
                        }
                    }
                    """.formatted(nftTable, clientVeth, httpPort, tlsPort));
            run("nft", "-f", rules.toString());
            undo.push(() -> run("nft", "delete", "table", "ip", nftTable));
        } finally {
            Files.delete(rules);
        }
    }

    /** Runs {@code argv} inside the client namespace, as a process in the sandbox would. */
    ToolRunner.Result inClient(String... argv) throws Exception {
        var full = new ArrayList<>(List.of("ip", "netns", "exec", clientNs));
        full.addAll(List.of(argv));
        return ToolRunner.run(full, TOOL_TIMEOUT);
    }

    /** Registers the undoing of something the test made outside this class. */
    void onClose(Step step) {
        undo.push(step);
    }

    private void netns(String name) throws Exception {
        run("ip", "netns", "add", name);
        undo.push(() -> run("ip", "netns", "delete", name));
    }

    private void veth(String hostSide, String ns, int net, int prefix, List<InetAddress> inside) throws Exception {
        String peer = hostSide + "p";
        run("ip", "link", "add", hostSide, "type", "veth", "peer", "name", peer);
        // Deleting either end deletes both; after the namespace is gone this finds nothing, which is fine.
        undo.push(() -> ToolRunner.run(List.of("ip", "link", "delete", hostSide), TOOL_TIMEOUT));
        run("ip", "link", "set", peer, "netns", ns);
        run("ip", "addr", "add", "10.254." + net + ".1/" + prefix, "dev", hostSide);
        run("ip", "link", "set", hostSide, "up");
        for (InetAddress a : inside) run("ip", "-n", ns, "addr", "add", a.getHostAddress() + "/" + prefix, "dev", peer);
        run("ip", "-n", ns, "link", "set", peer, "up");
        run("ip", "-n", ns, "link", "set", "lo", "up");
        run("ip", "-n", ns, "route", "add", "default", "via", "10.254." + net + ".1");
    }

    static void run(String... argv) throws Exception {
        ToolRunner.Result r = ToolRunner.run(List.of(argv), TOOL_TIMEOUT);
        if (r.exitCode() != 0) throw new IOException(String.join(" ", argv) + " exited " + r.exitCode() + ": " + r.stderrTail());
    }

    @Override
    public void close() throws Exception {
        Exception failure = null;
        while (!undo.isEmpty()) {
            try {
                undo.pop().run();
            } catch (Exception e) {
                if (failure == null) failure = new IOException("cleanup of test network " + label + " incomplete");
                failure.addSuppressed(e);
            }
        }
        if (failure != null) throw failure;
    }

    private static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}

package io.stasis.bench;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.NetworkPolicy;
import io.stasis.sdk.Sandbox;
import io.stasis.testkit.TestNetnsHost;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the egress proxy costs an allowed HTTPS download: the same file fetched from inside two
 * sandboxes, one whose policy allows the upstream's address (nftables lets the connection through
 * as it is) and one whose policy allows its name (the connection on 443 is redirected to the egress
 * proxy, which reads the TLS ClientHello's server name, checks it and relays the bytes), downloads
 * alternating between the two. The origin is {@link HttpsUpstream} in a network namespace of the
 * benchmark's own; the client is the host's curl run inside each sandbox's network namespace
 * ({@link NetnsCurl}: tiny has no TLS client).
 */
final class EgressOverhead implements Scenario {
    private static final long SIZE = 64L << 20;
    private static final int TLS_PORT = 443;
    /** Not redirected to the proxy: a name-only policy must refuse it (the check that 443 went through the proxy). */
    private static final int OTHER_PORT = 8443;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration REFUSED_TIMEOUT = Duration.ofSeconds(2);

    @Override
    public String name() {
        return "egress";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        var network = service.network();
        long size = Math.min(SIZE, context.maxSize());
        Path dir = Files.createDirectories(service.dataDir().resolve("bench-egress"));
        var upstream = TestNetnsHost.create(network.upstreamSlot());
        service.attach(upstream);
        var sandboxes = new ArrayList<Sandbox>();
        try {
            context.progress().say("upstream HTTPS origin at %s (%s), %d MiB per download", upstream.address(), BenchNetwork.UPSTREAM_NAME,
                    size >> 20);
            var origin = HttpsUpstream.start(upstream, dir, size, TLS_PORT, OTHER_PORT);
            var byAddress = create(context, sandboxes, NetworkPolicy.builder().denyByDefault().allow(upstream.address() + "/32").build());
            var byName = create(context, sandboxes, NetworkPolicy.builder().denyByDefault().allow(BenchNetwork.UPSTREAM_NAME).build());
            long directPid = pidOf(byAddress);
            long proxyPid = pidOf(byName);

            var refused = fetch(proxyPid, upstream, origin, OTHER_PORT, REFUSED_TIMEOUT);
            if (refused.ok())
                throw new IllegalStateException("the name-only policy let port " + OTHER_PORT + " through: downloads on 443 may not go through the proxy");
            var directOther = fetch(directPid, upstream, origin, OTHER_PORT, CONNECT_TIMEOUT);

            int n = context.counts().egress();
            int warmup = context.counts().warmupOfSlowSeries();
            var direct = new ArrayList<NetnsCurl.Download>();
            var proxied = new ArrayList<NetnsCurl.Download>();
            context.progress().say("egress: %d warm-up + %d downloads each way, alternating", warmup, n);
            for (int i = -warmup; i < n; i++) {
                var d = require(fetch(directPid, upstream, origin, TLS_PORT, CONNECT_TIMEOUT), "allowed by address", size);
                var p = require(fetch(proxyPid, upstream, origin, TLS_PORT, CONNECT_TIMEOUT), "allowed by name, through the proxy", size);
                if (i < 0) continue;
                direct.add(d);
                proxied.add(p);
                context.progress().tick("egress", i + 1, n);
            }
            var figures = figures(direct, proxied, size);
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("upstream", BenchNetwork.UPSTREAM_NAME + " = " + upstream.address());
            details.put("bytes_per_download", size);
            details.put("name_policy_port_" + OTHER_PORT, refused.ok() ? "reached" : "refused: " + refused.error());
            details.put("address_policy_port_" + OTHER_PORT, directOther.ok() ? "reached" : "refused: " + directOther.error());
            details.put("direct", direct.stream().map(Record::toString).toList());
            details.put("proxy", proxied.stream().map(Record::toString).toList());
            return new ScenarioResult(figures, details);
        } finally {
            RuntimeException failure = null;
            for (Sandbox sandbox : sandboxes) {
                try {
                    sandbox.delete();
                } catch (RuntimeException e) {
                    failure = failure == null ? e : addSuppressed(failure, e);
                }
            }
            service.detach(upstream);
            upstream.close();
            PrivateService.deleteTree(dir);
            if (failure != null) throw failure;
        }
    }

    private List<Figure> figures(List<NetnsCurl.Download> direct, List<NetnsCurl.Download> proxied, long size) {
        String what = (size >> 20) + " MiB over HTTPS from inside a tiny sandbox (host curl in its network namespace)";
        var directRate = Stats.of(direct.stream().mapToDouble(NetnsCurl.Download::mibPerSecond).toArray());
        var proxyRate = Stats.of(proxied.stream().mapToDouble(NetnsCurl.Download::mibPerSecond).toArray());
        var directTtfb = Stats.of(direct.stream().mapToDouble(d -> d.ttfb() * 1000).toArray());
        var proxyTtfb = Stats.of(proxied.stream().mapToDouble(d -> d.ttfb() * 1000).toArray());
        return List.of(
                Figure.of("egress.mib_s.direct", name(), "MiB/s", what + ", policy allowing the origin's address: no proxy", directRate),
                Figure.of("egress.mib_s.proxy", name(), "MiB/s", what + ", policy allowing the origin's name: through the egress proxy", proxyRate),
                Figure.of("egress.mib_s_ratio", name(), "x", "MiB/s through the proxy / direct, p50s", Stats.single(proxyRate.p50() / directRate.p50())),
                Figure.of("egress.ttfb.direct", name(), "ms", "curl's time to the first response byte (TCP + TLS handshake + request), direct",
                        directTtfb),
                Figure.of("egress.ttfb.proxy", name(), "ms", "the same through the proxy", proxyTtfb),
                Figure.of("egress.ttfb_overhead", name(), "ms", "p50 through the proxy minus p50 direct", Stats.single(proxyTtfb.p50() - directTtfb.p50())));
    }

    private static Sandbox create(BenchContext context, List<Sandbox> made, NetworkPolicy policy) {
        var sandbox = context.service().create(CreateSandboxRequest.builder().template("tiny").network(policy).build());
        made.add(sandbox);
        return sandbox;
    }

    /** A process of the sandbox (found by its cgroup): its network namespace is the sandbox's. */
    private static long pidOf(Sandbox sandbox) {
        return HostMemory.processesOf(sandbox.id()).stream().min(Long::compare)
                .orElseThrow(() -> new IllegalStateException("no process of " + sandbox.id() + " found in its cgroup"));
    }

    private static NetnsCurl.Download fetch(long pid, TestNetnsHost upstream, HttpsUpstream origin, int port, Duration connectTimeout)
            throws IOException {
        return NetnsCurl.get(pid, BenchNetwork.UPSTREAM_NAME, upstream.address(), port, origin.caPem(), "/blob", connectTimeout);
    }

    private static NetnsCurl.Download require(NetnsCurl.Download download, String how, long size) {
        if (!download.ok() || download.bytes() != size)
            throw new IllegalStateException("the download " + how + " failed: " + download);
        return download;
    }

    private static RuntimeException addSuppressed(RuntimeException first, RuntimeException next) {
        first.addSuppressed(next);
        return first;
    }
}

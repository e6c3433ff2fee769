package io.stasis.network.linux;

import io.stasis.core.network.EgressDecisions;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.network.linux.dns.DnsUpstreams;
import io.stasis.network.linux.dns.SandboxDnsResolver;
import io.stasis.network.linux.nflog.NflogReader;
import io.stasis.network.linux.proxy.EgressLimits;
import io.stasis.network.linux.proxy.EgressProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The host side of sandbox networks, running: the DNS resolver and the egress proxy that the
 * packet filter redirects sandbox traffic to, the reader of the filter's drop log, and the filter
 * itself. Closing stops the resolver, the proxy and the reader; the table stays for sandboxes that
 * outlive the service, unless none are left.
 */
public final class LinuxNetworking implements AutoCloseable {
    private final LinuxHostNetwork host;
    private final SandboxDnsResolver dns;
    private final EgressProxy proxy;
    private final NflogReader drops;

    private LinuxNetworking(LinuxHostNetwork host, SandboxDnsResolver dns, EgressProxy proxy, NflogReader drops) {
        this.host = host;
        this.dns = dns;
        this.proxy = proxy;
        this.drops = drops;
    }

    /**
     * Starts the resolver and the proxy on ports of their own choosing and the reader of the
     * filter's drop log, then installs the table with the rules of the {@code recorded} sandboxes.
     *
     * @param staticNames names the resolver answers itself (operators' internal hosts; tests' upstreams)
     */
    public static LinuxNetworking start(LinuxHostNetwork host, Map<String, List<Inet4Address>> staticNames,
                                        Map<SandboxId, Map.Entry<NetworkAttachment, EgressPolicy>> recorded,
                                        EgressDecisions decisions) {
        return start(host, staticNames, recorded, decisions, EgressLimits.DEFAULTS);
    }

    /** As above, the egress proxy holding each sandbox to {@code limits}. */
    public static LinuxNetworking start(LinuxHostNetwork host, Map<String, List<Inet4Address>> staticNames,
                                        Map<SandboxId, Map.Entry<NetworkAttachment, EgressPolicy>> recorded,
                                        EgressDecisions decisions, EgressLimits limits) {
        SandboxDnsResolver dns = null;
        try {
            dns = SandboxDnsResolver.start(host, DnsUpstreams.fromResolvConf(), staticNames, new InetSocketAddress(0));
            var names = Map.copyOf(lowercase(staticNames));
            var proxy = EgressProxy.start(host, name -> resolve(names, name), InetAddress.getByName("0.0.0.0"), 0, 0, limits);
            NflogReader drops = null;
            try {
                drops = NflogReader.start(host.config().logGroup(), host::dropped);
                host.start(new ServicePorts(dns.port(), proxy.httpPort(), proxy.tlsPort()), recorded, decisions);
            } catch (IOException | RuntimeException e) {
                if (drops != null) drops.close();
                proxy.close();
                throw e;
            }
            return new LinuxNetworking(host, dns, proxy, drops);
        } catch (IOException e) {
            if (dns != null) dns.close();
            throw new UncheckedIOException("starting the sandbox DNS resolver, egress proxy and drop log reader", e);
        } catch (RuntimeException e) {
            if (dns != null) dns.close();
            throw e;
        }
    }

    /** Names as the sandboxes' resolver answers them: its own names first, then the host's resolver. */
    private static List<InetAddress> resolve(Map<String, List<Inet4Address>> staticNames, String name) throws IOException {
        var own = staticNames.get(name.toLowerCase(Locale.ROOT));
        if (own != null) return List.copyOf(own);
        return Arrays.stream(InetAddress.getAllByName(name)).filter(a -> a instanceof Inet4Address).toList();
    }

    private static Map<String, List<Inet4Address>> lowercase(Map<String, List<Inet4Address>> names) {
        var out = new HashMap<String, List<Inet4Address>>();
        names.forEach((k, v) -> out.put(k.toLowerCase(Locale.ROOT), v));
        return out;
    }

    public LinuxHostNetwork host() {
        return host;
    }

    public EgressProxy proxy() {
        return proxy;
    }

    /** Stops the resolver, the proxy and the drop log reader; with {@code noSandboxesLeft}, removes the table too. */
    public void close(boolean noSandboxesLeft) {
        try {
            drops.close();
            proxy.close();
            dns.close();
        } finally {
            if (noSandboxesLeft) host.removeAll();
        }
    }

    @Override
    public void close() {
        close(false);
    }
}

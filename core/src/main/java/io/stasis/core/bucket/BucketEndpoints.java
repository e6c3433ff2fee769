package io.stasis.core.bucket;

import io.stasis.core.error.StasisException;
import io.stasis.core.network.Cidr;
import io.stasis.core.spi.BucketMount;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Which S3 endpoints a bucket mount may reach. The FUSE daemon connects from the host's network,
 * not the sandbox's, so an endpoint is a host the service itself connects to: without a check, a
 * tenant could aim it at the host's loopback services, the cloud metadata address or the private
 * network the host sits on. An endpoint must therefore resolve only to public addresses, unless an
 * operator opened a range ({@code --bucket-endpoints-allow}, e.g. the LAN's MinIO).
 *
 * <p>Not public: unspecified, loopback, link-local (169.254.169.254 among them), private (RFC 1918,
 * IPv6 unique local), CGNAT (100.64.0.0/10), multicast, and every address of the host's own
 * interfaces. The check runs before each mount (create, start, resume, restore elsewhere, a
 * daemon made again after a restart), on what the name resolves to then, and the mount is pinned
 * to the addresses checked ({@code BucketMount#addresses}): its daemon never resolves the name
 * itself, so a name whose answer changes after the check (DNS rebinding) reaches nothing new.
 *
 * @param allowed       ranges opened on purpose, checked before the rules above
 * @param hostAddresses the addresses of the host's own interfaces, read at each check (they change)
 * @param resolver      what a name resolves to on the host (the server gives the host's own: HostAddresses)
 */
public record BucketEndpoints(List<Cidr> allowed, Supplier<Set<InetAddress>> hostAddresses, Resolver resolver) {
    private static final Cidr CGNAT = Cidr.parse("100.64.0.0/10", "cgnat");
    private static final Cidr UNIQUE_LOCAL = Cidr.parse("fc00::/7", "ula");
    private static final Cidr THIS_NETWORK = Cidr.parse("0.0.0.0/8", "this-network");

    /** Name to addresses, as the host resolves it. */
    @FunctionalInterface
    public interface Resolver {
        List<InetAddress> resolve(String host) throws UnknownHostException;
    }

    public BucketEndpoints {
        allowed = List.copyOf(allowed);
    }

    /**
     * Refuses an endpoint that resolves to an address that is neither public nor opened:
     * {@code invalid_request} naming {@code field}. Returns the addresses checked: the only ones a
     * mount of it may connect to.
     */
    public List<InetAddress> check(String field, URI endpoint) {
        String host = endpoint.getHost();
        if (host == null) throw StasisException.invalid(field, "'" + endpoint + "' names no host");
        List<InetAddress> addresses;
        try {
            addresses = resolver.resolve(BucketMount.hostOf(endpoint));
        } catch (UnknownHostException e) {
            throw StasisException.invalid(field, "the host '" + host + "' does not resolve on this server");
        }
        var own = hostAddresses.get();
        for (InetAddress address : addresses) {
            if (allowed.stream().anyMatch(c -> c.contains(address))) continue;
            String why = whyNotPublic(address, own);
            if (why != null)
                throw StasisException.invalid(field, "'" + host + "' resolves to " + address.getHostAddress() + ", " + why
                        + ": bucket mounts connect from the server itself, so they may reach public addresses only"
                        + " (an operator opens a range with --bucket-endpoints-allow)");
        }
        if (addresses.isEmpty()) throw StasisException.invalid(field, "the host '" + host + "' resolves to no address on this server");
        return List.copyOf(addresses);
    }

    private static String whyNotPublic(InetAddress a, Set<InetAddress> own) {
        if (a.isAnyLocalAddress() || THIS_NETWORK.contains(a)) return "an unspecified address";
        if (a.isLoopbackAddress()) return "a loopback address";
        if (a.isLinkLocalAddress()) return "a link-local address";
        if (a.isSiteLocalAddress() || UNIQUE_LOCAL.contains(a)) return "a private address";
        if (CGNAT.contains(a)) return "a shared (CGNAT) address";
        if (a.isMulticastAddress()) return "a multicast address";
        if (own.contains(a)) return "an address of this server";
        return null;
    }
}

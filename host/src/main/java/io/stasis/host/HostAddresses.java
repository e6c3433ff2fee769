package io.stasis.host;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The host's view of addresses: what a name resolves to here, and the addresses of its own interfaces. */
public final class HostAddresses {
    private HostAddresses() {
    }

    /** What the host's resolver answers for {@code host}. */
    public static List<InetAddress> resolve(String host) throws UnknownHostException {
        return List.of(InetAddress.getAllByName(host));
    }

    /** The addresses of the host's interfaces, read when asked (they change). */
    public static Set<InetAddress> ofInterfaces() {
        try {
            var out = new HashSet<InetAddress>();
            var interfaces = NetworkInterface.getNetworkInterfaces();
            while (interfaces.hasMoreElements()) interfaces.nextElement().getInetAddresses().asIterator().forEachRemaining(out::add);
            return out;
        } catch (SocketException e) {
            throw new IllegalStateException("cannot list the host's interfaces: " + e.getMessage(), e);
        }
    }
}

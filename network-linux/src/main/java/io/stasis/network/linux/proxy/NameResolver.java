package io.stasis.network.linux.proxy;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;

/**
 * Where a name leads, as the sandbox's own DNS resolver would answer it. The proxy connects an
 * allowed name only to one of these addresses, so a sandbox cannot present an allowed name to an
 * address of its choosing. Called on the connection's own thread; may block.
 */
@FunctionalInterface
public interface NameResolver {
    /** The addresses of {@code name} (normalized: lowercase, no trailing dot); empty if it has none. */
    List<InetAddress> resolve(String name) throws IOException;
}

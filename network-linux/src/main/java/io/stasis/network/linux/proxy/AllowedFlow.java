package io.stasis.network.linux.proxy;

import io.stasis.core.sandbox.SandboxId;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * A connection the policy allowed, ready to be carried.
 *
 * @param name     the name it presented, if any (SNI or Host)
 * @param upstream where to connect: see {@link UpstreamChoice}
 * @param head     the bytes already read from the client, to be sent upstream first
 */
record AllowedFlow(SandboxId sandbox, Protocol protocol, Optional<String> name, InetSocketAddress upstream, byte[] head) {
}

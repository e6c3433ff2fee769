package io.stasis.network.linux.proxy;

/**
 * The egress proxy's counters since it started, for metrics.
 *
 * @param accepted  connections accepted on either port
 * @param allowed   connections the policy allowed and the proxy carried upstream
 * @param denied    connections refused (policy, malformed head, unresolvable name); each also reported to the gate
 * @param failed    connections dropped for other reasons: unknown peer, no head before the timeout, upstream unreachable
 * @param bytesUp   bytes sent upstream, the replayed head included
 * @param bytesDown bytes sent back to sandboxes
 * @param active    connections open now
 * @param idleClosed connections closed for being idle past the limit
 */
public record ProxyStats(long accepted, long allowed, long denied, long failed, long bytesUp, long bytesDown, int active, long idleClosed) {
}

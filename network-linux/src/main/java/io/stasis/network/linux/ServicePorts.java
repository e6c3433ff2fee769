package io.stasis.network.linux;

/** The host ports sandbox traffic is redirected to: the DNS resolver (UDP and TCP) and the egress proxy. */
public record ServicePorts(int dns, int http, int tls) {
}

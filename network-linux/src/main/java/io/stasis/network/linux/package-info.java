/**
 * Sandbox networks on Linux: a veth pair per sandbox, addresses from a configured range, NAT out,
 * and the egress policy enforced on the host, where root inside a sandbox cannot reach it: nftables
 * rules and sets per sandbox, a DNS resolver that answers only allowed names, and a transparent
 * proxy that checks the TLS SNI or HTTP Host of connections to ports 80 and 443.
 */
package io.stasis.network.linux;

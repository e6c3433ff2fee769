/**
 * The sandboxes' DNS resolver: nftables redirects a sandbox's port 53 traffic here, and only names
 * its egress policy allows get an answer. Denied names get NXDOMAIN rather than REFUSED, so that
 * programs fail at once instead of trying the next nameserver.
 *
 * <p>The codec ({@link io.stasis.network.linux.dns.DnsMessage} and its parts) is our own and reads
 * only what the resolver must judge: headers, questions, A and CNAME records. Everything else is
 * kept as opaque bytes and answers from upstream are passed on as they came, but for the id.
 */
package io.stasis.network.linux.dns;

package io.stasis.network.linux.dns;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class DnsUpstreamsTest {

    @Test
    void resolvConfGivesItsNameserverLinesInOrderOnPort53() {
        var upstreams = DnsUpstreams.parseResolvConf("""
                # generated
                nameserver 127.0.0.53
                search example.test
                ; nameserver 192.0.2.9
                nameserver   192.0.2.1
                nameserver not-an-address
                nameserver 2001:db8::1
                options edns0 trust-ad
                """);

        assertThat(upstreams.servers()).containsExactly(
                new InetSocketAddress(InetAddress.ofLiteral("127.0.0.53"), 53),
                new InetSocketAddress(InetAddress.ofLiteral("192.0.2.1"), 53),
                new InetSocketAddress(InetAddress.ofLiteral("2001:db8::1"), 53));
        assertThat(upstreams.timeout()).isEqualTo(DnsUpstreams.DEFAULT_TIMEOUT);
    }
}

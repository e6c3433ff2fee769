package io.stasis.network.linux.dns;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resolvers allowed names are forwarded to, tried in order, each given {@code timeout} before
 * the next. Empty is allowed: then only static names resolve and the rest get SERVFAIL.
 */
public record DnsUpstreams(List<InetSocketAddress> servers, Duration timeout) {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    public static final Path RESOLV_CONF = Path.of("/etc/resolv.conf");
    private static final Logger log = LoggerFactory.getLogger(DnsUpstreams.class);
    private static final int DNS_PORT = 53;

    public DnsUpstreams {
        servers = List.copyOf(servers);
        if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("upstream timeout must be positive, was " + timeout);
    }

    public static DnsUpstreams of(InetSocketAddress... servers) {
        return new DnsUpstreams(List.of(servers), DEFAULT_TIMEOUT);
    }

    /** The host's own nameservers, from {@link #RESOLV_CONF}. */
    public static DnsUpstreams fromResolvConf() throws IOException {
        return fromResolvConf(RESOLV_CONF);
    }

    /**
     * The {@code nameserver} lines of a resolv.conf, as they are. A loopback stub such as
     * systemd-resolved's 127.0.0.53 is fine: the resolver runs on the host, where the stub listens.
     */
    public static DnsUpstreams fromResolvConf(Path file) throws IOException {
        return parseResolvConf(Files.readString(file));
    }

    static DnsUpstreams parseResolvConf(String text) {
        var servers = new ArrayList<InetSocketAddress>();
        for (String line : text.lines().toList()) {
            String[] words = line.strip().split("\\s+");
            if (words.length < 2 || !words[0].equals("nameserver")) continue;
            try {
                servers.add(new InetSocketAddress(InetAddress.ofLiteral(words[1]), DNS_PORT));
            } catch (IllegalArgumentException e) {
                // glibc skips such lines too; say so, since a typo here silently loses a resolver
                log.atWarn().addKeyValue("line", line).log("resolv.conf names a nameserver that is not an IP address; skipped");
            }
        }
        return new DnsUpstreams(servers, DEFAULT_TIMEOUT);
    }
}

package io.stasis.server;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The Debian mirror this host's apt uses, as the host resolves it (an {@code /etc/hosts} entry
 * included), for a test whose sandbox runs apt: the sandboxes' resolver is told the same
 * addresses ({@code --dns-names}), so no test names a mirror and none reaches another one.
 */
record AptMirror(String host, List<Inet4Address> addresses) {
    private static final Pattern URI_LINE = Pattern.compile("(?m)^(?:URIs:\\s*|deb\\s+(?:\\[[^]]*]\\s+)?)(https?://\\S+)");

    static Optional<AptMirror> ofHost() {
        for (Path file : List.of(Path.of("/etc/apt/sources.list.d/debian.sources"), Path.of("/etc/apt/sources.list"))) {
            try {
                var m = URI_LINE.matcher(Files.readString(file));
                if (!m.find()) continue;
                String host = URI.create(m.group(1)).getHost();
                var addresses = Arrays.stream(InetAddress.getAllByName(host)).filter(a -> a instanceof Inet4Address)
                        .map(a -> (Inet4Address) a).toList();
                if (!addresses.isEmpty()) return Optional.of(new AptMirror(host, addresses));
            } catch (IOException | IllegalArgumentException e) {
                // no such file, or nothing usable in it: try the next
            }
        }
        return Optional.empty();
    }

    /** The service flag that makes sandboxes resolve the mirror as the host does. */
    List<String> dnsFlags() {
        return List.of("--dns-names", host + "=" + addresses.stream().map(Inet4Address::getHostAddress).collect(Collectors.joining(",")));
    }
}

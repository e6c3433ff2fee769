package io.stasis.core.bucket;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.StasisException;
import io.stasis.core.network.Cidr;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BucketEndpointsTest {
    private static final Map<String, List<String>> DNS = Map.of(
            "s3.example.com", List.of("203.0.113.10"),
            "mixed.example.com", List.of("203.0.113.11", "10.1.2.3"),
            "minio.lan", List.of("192.168.1.20"),
            "me.example.com", List.of("198.51.100.7"));

    private static BucketEndpoints endpoints(String... allowed) {
        return new BucketEndpoints(Arrays.stream(allowed).map(c -> Cidr.parse(c, "allowed")).toList(),
                () -> Set.of(address("198.51.100.7")), host -> {
                    var answer = DNS.get(host);
                    if (answer != null) return answer.stream().map(BucketEndpointsTest::address).toList();
                    if (Cidr.looksLikeCidr(host)) return List.of(address(host));
                    throw new UnknownHostException(host);
                });
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Test
    void publicEndpointsPass() {
        assertThatCode(() -> endpoints().check("mounts[0].endpoint", URI.create("https://s3.example.com"))).doesNotThrowAnyException();
        assertThatCode(() -> endpoints().check("mounts[0].endpoint", URI.create("http://203.0.113.9:9000"))).doesNotThrowAnyException();
    }

    @Test
    void whatTheHostCouldReachOnlyFromInsideIsRefusedNamingTheField() {
        for (String url : List.of("http://127.0.0.1:9000", "http://localhost.localdomain.invalid", "http://169.254.169.254", "http://10.0.0.5",
                "http://172.16.3.4", "http://192.168.1.1", "http://100.64.0.1", "http://0.0.0.0", "http://[::1]:9000", "http://[fd00::1]",
                "http://[fe80::1]", "http://[::ffff:127.0.0.1]", "http://224.0.0.1", "https://mixed.example.com", "https://me.example.com",
                "https://minio.lan"))
            assertThatThrownBy(() -> endpoints().check("mounts[2].endpoint", URI.create(url))).as(url)
                    .isInstanceOf(StasisException.class).hasMessageStartingWith("mounts[2].endpoint");
    }

    @Test
    void anOperatorOpensRanges() {
        assertThatCode(() -> endpoints("192.168.1.0/24").check("f", URI.create("https://minio.lan"))).doesNotThrowAnyException();
        assertThatCode(() -> endpoints("127.0.0.0/8").check("f", URI.create("http://127.0.0.1:9000"))).doesNotThrowAnyException();
        assertThatThrownBy(() -> endpoints("192.168.1.0/24").check("f", URI.create("http://192.168.2.1"))).isInstanceOf(StasisException.class);
    }
}

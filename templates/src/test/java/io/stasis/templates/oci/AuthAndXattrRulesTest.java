package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.spi.FileOwner;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The small rules: challenge parsing, which xattrs pass and how capabilities are namespaced, how member names become paths. */
class AuthAndXattrRulesTest {
    static final FileOwner BASE = new FileOwner(100000, 100000);

    @Test
    void challengesAreParsedWithQuotedCommasAndEscapes() {
        var c = WwwAuthenticate.parse("Bearer realm=\"https://auth.example/token\",service=\"registry.example\","
                + "scope=\"repository:a/b:pull,push\", error=\"say \\\"hi\\\"\"").orElseThrow();
        var basic = WwwAuthenticate.parse("Basic realm=Registry").orElseThrow();

        assertThat(c.scheme()).isEqualTo("bearer");
        assertThat(c.params()).isEqualTo(Map.of("realm", "https://auth.example/token", "service", "registry.example",
                "scope", "repository:a/b:pull,push", "error", "say \"hi\""));
        assertThat(basic.scheme()).isEqualTo("basic");
        assertThat(basic.param("realm")).hasValue("Registry");
        assertThat(WwwAuthenticate.parse(null)).isEmpty();
    }

    @Test
    void capabilitiesOfEveryRevisionBecomeV3OwnedByTheSandboxRoot() {
        byte[] v2 = {0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}; // not effective; cap_net_raw + cap 32 permitted
        byte[] v1 = {1, 0, 0, 1, 0, 0x30, 0, 0, 0, 0, 0, 0};
        byte[] v3 = {1, 0, 0, 3, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

        assertThat(XattrPolicy.capabilityForNamespace(v2, 100000))
                .containsExactly(0, 0, 0, 3, 0, 0x20, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, (byte) 0xa0, (byte) 0x86, 1, 0);
        assertThat(XattrPolicy.capabilityForNamespace(v1, 100000))
                .containsExactly(1, 0, 0, 3, 0, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xa0, (byte) 0x86, 1, 0);
        assertThat(XattrPolicy.capabilityForNamespace(v3, 7)).endsWith(7, 0, 0, 0);
        assertThat(XattrPolicy.capabilityForNamespace(new byte[] {0, 0, 0, 2}, 1)).isNull();
        assertThat(XattrPolicy.capabilityForNamespace(new byte[] {0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0}, 1)).isNull();
    }

    @Test
    void onlyUserAttributesAndCapabilitiesPass() {
        assertThat(XattrPolicy.decide("user.mime", new byte[] {1}, false, BASE)).isInstanceOf(XattrPolicy.Apply.class);
        assertThat(XattrPolicy.decide("user.mime", new byte[] {1}, true, BASE)).isInstanceOf(XattrPolicy.Skip.class);
        assertThat(XattrPolicy.decide("security.capability", new byte[] {1, 2}, false, BASE))
                .isEqualTo(new XattrPolicy.Skip("not a valid file capability value (2 bytes)"));
        for (String name : new String[] {"trusted.overlay.opaque", "security.selinux", "system.posix_acl_access", "system.nfs4_acl", "other.x"})
            assertThat(XattrPolicy.decide(name, new byte[0], false, BASE)).as(name).isInstanceOf(XattrPolicy.Skip.class);
    }

    @Test
    void memberNamesBecomePathsInsideTheRootOrAreRefused() {
        assertThat(EntryPath.of("./usr//bin/./ls", "m").toString()).isEqualTo("/usr/bin/ls");
        assertThat(EntryPath.of("a/b/../c/", "m").toString()).isEqualTo("/a/c");
        assertThat(EntryPath.of("./", "m").isRoot()).isTrue();
        assertThatThrownBy(() -> EntryPath.of("a/../../etc", "m")).isInstanceOfSatisfying(ImageException.class,
                e -> assertThat(e.reason()).isEqualTo(ImageException.Reason.REFUSED));
        assertThatThrownBy(() -> EntryPath.of("/etc/passwd", "m")).hasMessageContaining("an absolute path");
    }
}

package io.stasis.network.linux.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.sandbox.SandboxId;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.Optional;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Per-sandbox CAs: created once with a private key only the host can read, inherited by memory forks, forgotten with the sandbox. */
class SandboxAuthoritiesTest {
    @TempDir
    Path dir;

    @Test
    void aSandboxGetsItsOwnCaAndAForkInheritsIt() throws Exception {
        var cas = new SandboxAuthorities(dir, Clock.systemUTC());
        var a = SandboxId.random();
        var b = SandboxId.random();
        var fork = SandboxId.random();
        String pemA = cas.certificatePem(a, Optional.empty());
        assertThat(cas.certificatePem(a, Optional.empty())).isEqualTo(pemA);
        assertThat(cas.certificatePem(b, Optional.empty())).isNotEqualTo(pemA);
        assertThat(cas.certificatePem(fork, Optional.of(a))).isEqualTo(pemA);

        X509Certificate ca = certificate(pemA);
        assertThat(ca.getBasicConstraints()).isZero();
        assertThat(ca.getSubjectX500Principal().getName()).contains(a.value());
        assertThat(Files.getPosixFilePermissions(dir.resolve(a.value()).resolve("ca.key"))).isEqualTo(PosixFilePermissions.fromString("rw-------"));

        // A leaf for a name, chained to the sandbox's CA.
        SSLEngine engine = cas.serverContext(a, "api.example.com").createSSLEngine();
        assertThat(engine).isNotNull();

        cas.forget(a);
        assertThat(dir.resolve(a.value())).doesNotExist();
        assertThatThrownBy(() -> cas.serverContext(a, "api.example.com")).hasMessageContaining("no egress CA");
        assertThat(cas.certificatePem(fork, Optional.empty())).isEqualTo(pemA); // the fork's copy stays
    }

    private static X509Certificate certificate(String pem) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }
}

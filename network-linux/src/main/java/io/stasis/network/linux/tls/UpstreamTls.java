package io.stasis.network.linux.tls;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The TLS client context with which the egress proxy connects upstream for intercepted names: the
 * JDK's default trust anchors, plus an operator's CA bundle if given (internal CAs; tests). The
 * caller turns hostname verification on per connection.
 */
public final class UpstreamTls {
    private UpstreamTls() {
    }

    /** @param extraCaBundle a PEM file of CA certificates to trust besides the JDK's */
    public static SSLContext context(Optional<Path> extraCaBundle) {
        try {
            var defaults = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            defaults.init((KeyStore) null);
            KeyStore anchors = KeyStore.getInstance("PKCS12");
            anchors.load(null, null);
            int i = 0;
            for (var tm : defaults.getTrustManagers())
                if (tm instanceof X509TrustManager x)
                    for (X509Certificate c : x.getAcceptedIssuers()) anchors.setCertificateEntry("default-" + i++, c);
            if (extraCaBundle.isPresent()) {
                try (InputStream in = Files.newInputStream(extraCaBundle.get())) {
                    var extra = CertificateFactory.getInstance("X.509").generateCertificates(in);
                    if (extra.isEmpty()) throw new IllegalArgumentException("no certificate in " + extraCaBundle.get());
                    for (var c : extra) anchors.setCertificateEntry("extra-" + i++, c);
                }
            }
            var tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(anchors);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return context;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the upstream CA bundle " + extraCaBundle.orElse(null), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot build the upstream TLS context", e);
        }
    }
}

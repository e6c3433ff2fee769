package io.stasis.network.linux.tls;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.InterceptionCa;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Each sandbox lineage's interception CA (ECDSA P-256) and the leaf certificates it issues for the
 * names the egress proxy intercepts. A CA lives in {@code <dir>/<sandbox>/} as {@code ca.key}
 * (PKCS#8, mode 0600, never inside a sandbox) and {@code ca.crt}; a memory fork gets a copy of its
 * parent's (its restored processes trust that one already). Leaves live in memory only, one per
 * sandbox and name, reissued a day before they expire.
 */
public final class SandboxAuthorities implements InterceptionCa {
    private static final Duration CA_VALIDITY = Duration.ofDays(3650);
    private static final Duration LEAF_VALIDITY = Duration.ofDays(7);
    private static final Duration LEAF_RENEW_BEFORE = Duration.ofDays(1);
    /** Clocks inside and outside disagree a little; certificates start an hour in the past. */
    private static final Duration BACKDATE = Duration.ofHours(1);

    private final Path dir;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();
    private final Map<SandboxId, Authority> authorities = new ConcurrentHashMap<>();
    private final Map<String, Leaf> leaves = new ConcurrentHashMap<>();

    private record Authority(PrivateKey key, X509Certificate certificate) {
    }

    private record Leaf(SSLContext context, Instant notAfter) {
    }

    public SandboxAuthorities(Path dir, Clock clock) {
        this.dir = dir;
        this.clock = clock;
    }

    @Override
    public synchronized String certificatePem(SandboxId sandbox, Optional<SandboxId> inheritFrom) {
        Path own = dir.resolve(sandbox.value());
        try {
            if (!Files.exists(own.resolve("ca.crt"))) {
                Path parent = inheritFrom.map(p -> dir.resolve(p.value())).filter(p -> Files.exists(p.resolve("ca.crt"))).orElse(null);
                if (parent != null) copy(parent, own);
                else create(sandbox, own);
            }
            return pem(authority(sandbox).certificate());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the egress CA of " + sandbox + " in " + own, e);
        }
    }

    @Override
    public synchronized void forget(SandboxId sandbox) {
        authorities.remove(sandbox);
        leaves.keySet().removeIf(k -> k.startsWith(sandbox.value() + "|"));
        Path own = dir.resolve(sandbox.value());
        try {
            Files.deleteIfExists(own.resolve("ca.key"));
            Files.deleteIfExists(own.resolve("ca.crt"));
            Files.deleteIfExists(own);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the egress CA of " + sandbox + " in " + own, e);
        }
    }

    /**
     * A server-side TLS context presenting a leaf for {@code name} signed by the sandbox's CA.
     *
     * @throws IllegalStateException if the sandbox has no CA (its policy never had rules)
     */
    public SSLContext serverContext(SandboxId sandbox, String name) {
        String key = sandbox.value() + "|" + name.toLowerCase(Locale.ROOT);
        Instant now = clock.instant();
        Leaf leaf = leaves.get(key);
        if (leaf == null || now.isAfter(leaf.notAfter().minus(LEAF_RENEW_BEFORE))) {
            leaf = issue(authority(sandbox), name, now);
            leaves.put(key, leaf);
        }
        return leaf.context();
    }

    private Authority authority(SandboxId sandbox) {
        return authorities.computeIfAbsent(sandbox, id -> {
            Path own = dir.resolve(id.value());
            try {
                if (!Files.exists(own.resolve("ca.key"))) throw new IllegalStateException("sandbox " + id + " has no egress CA");
                var key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Files.readAllBytes(own.resolve("ca.key"))));
                try (var in = Files.newInputStream(own.resolve("ca.crt"))) {
                    var cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
                    return new Authority(key, cert);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the egress CA of " + id, e);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("the egress CA of " + id + " in " + own + " is damaged", e);
            }
        });
    }

    private void create(SandboxId sandbox, Path own) throws IOException {
        try {
            KeyPair pair = keyPair();
            var subject = new X500Name("CN=Stasis egress CA for " + sandbox.value() + ",O=Stasis");
            Instant now = clock.instant();
            var utils = new JcaX509ExtensionUtils();
            var builder = new JcaX509v3CertificateBuilder(subject, serial(), Date.from(now.minus(BACKDATE)), Date.from(now.plus(CA_VALIDITY)),
                    subject, pair.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(pair.getPublic()));
            X509Certificate cert = sign(builder, pair.getPrivate());
            Files.createDirectories(dir);
            Files.createDirectories(own, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path keyTmp = own.resolve("ca.key.tmp");
            Files.deleteIfExists(keyTmp);
            Files.createFile(keyTmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(keyTmp, pair.getPrivate().getEncoded());
            Files.move(keyTmp, own.resolve("ca.key"), StandardCopyOption.ATOMIC_MOVE);
            Files.writeString(own.resolve("ca.crt.tmp"), pem(cert));
            Files.move(own.resolve("ca.crt.tmp"), own.resolve("ca.crt"), StandardCopyOption.ATOMIC_MOVE);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot create an egress CA", e);
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        Files.createDirectories(to, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.copy(from.resolve("ca.key"), to.resolve("ca.key"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
        Files.copy(from.resolve("ca.crt"), to.resolve("ca.crt"), StandardCopyOption.REPLACE_EXISTING);
    }

    private Leaf issue(Authority ca, String name, Instant now) {
        try {
            KeyPair pair = keyPair();
            Instant notAfter = now.plus(LEAF_VALIDITY);
            var utils = new JcaX509ExtensionUtils();
            var builder = new JcaX509v3CertificateBuilder(ca.certificate(), serial(), Date.from(now.minus(BACKDATE)), Date.from(notAfter),
                    new X500Name("CN=" + name), pair.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
                    .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName(GeneralName.dNSName, name)))
                    .addExtension(Extension.subjectKeyIdentifier, false, utils.createSubjectKeyIdentifier(pair.getPublic()))
                    .addExtension(Extension.authorityKeyIdentifier, false, utils.createAuthorityKeyIdentifier(ca.certificate()));
            X509Certificate cert = sign(builder, ca.key());
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            char[] password = new char[0];
            store.setKeyEntry("leaf", pair.getPrivate(), password, new X509Certificate[]{cert, ca.certificate()});
            var kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(store, password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), null, random);
            return new Leaf(context, notAfter);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot issue an egress certificate for " + name, e);
        }
    }

    private KeyPair keyPair() throws GeneralSecurityException {
        var generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"), random);
        return generator.generateKeyPair();
    }

    private BigInteger serial() {
        return new BigInteger(127, random).add(BigInteger.ONE);
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey key) throws GeneralSecurityException {
        try {
            return new JcaX509CertificateConverter().getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key)));
        } catch (OperatorCreationException e) {
            throw new GeneralSecurityException("cannot sign with the egress CA", e);
        }
    }

    static String pem(X509Certificate cert) throws IOException {
        var out = new StringWriter();
        try (var writer = new JcaPEMWriter(out)) {
            writer.writeObject(cert);
        }
        return out.toString();
    }
}

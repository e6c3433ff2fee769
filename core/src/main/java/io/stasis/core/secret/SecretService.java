package io.stasis.core.secret;

import io.stasis.core.tenant.TenantId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.SecretCatalog;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Secrets: values the egress proxy adds to requests of sandboxes (see {@code HeaderRule}) without
 * the sandbox ever holding them. Write-only through the API: set, list by name, delete. Values are
 * sealed with {@link SecretCipher} before they reach the catalog, and are never logged. Secrets
 * belong to a tenant: a sandbox's policy names its own tenant's secrets. A policy may name a secret
 * that is deleted later (requests needing it then fail).
 */
public final class SecretService {
    private static final Logger log = LoggerFactory.getLogger(SecretService.class);
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");
    /** The longest value, in UTF-8 bytes. */
    public static final int MAX_VALUE_BYTES = 64 * 1024;

    private final SecretCatalog catalog;
    private final SecretCipher cipher;
    private final Clock clock;

    public SecretService(SecretCatalog catalog, SecretCipher cipher, Clock clock) {
        this.catalog = catalog;
        this.cipher = cipher;
        this.clock = clock;
    }

    /** A stored secret, and whether this call created it (rather than replacing its value). */
    public record Stored(Secret secret, boolean created) {
    }

    /**
     * Sets a secret's value, creating the secret or replacing its value.
     * <p>Effects on success: new intercepted connections use the value at once.
     * <p>On failure: {@code invalid_request} for a bad name, an empty value, one longer than 64 KiB or
     * holding CR, LF or NUL (values go into HTTP headers). Nothing is stored.
     */
    public Stored put(TenantId tenant, String name, String value) {
        validateName(name, "name");
        validateValue(value);
        var secret = new Secret(name, clock.instant());
        boolean created = catalog.putSecret(tenant, new SealedSecret(name, secret.createdAt(), cipher.seal(sealedName(tenant, name), value)));
        log.atInfo().addKeyValue("tenant", tenant).addKeyValue("secret", name).addKeyValue("created", created).log("secret set");
        return new Stored(secret, created);
    }

    /** The tenant's secrets, by name; never their values. */
    public List<Secret> list(TenantId tenant) {
        return catalog.secretsOf(tenant).stream().map(SealedSecret::secret).toList();
    }

    public boolean exists(TenantId tenant, String name) {
        return catalog.findSecret(tenant, name).isPresent();
    }

    /** @throws StasisException {@code secret_not_found} */
    public void delete(TenantId tenant, String name) {
        validateName(name, "name");
        if (!catalog.deleteSecret(tenant, name)) throw notFound(name);
        log.atInfo().addKeyValue("tenant", tenant).addKeyValue("secret", name).log("secret deleted");
    }

    /** The values of those of the tenant's {@code names} that exist (for the egress proxy only). */
    public Map<String, String> values(TenantId tenant, Collection<String> names) {
        var out = new LinkedHashMap<String, String>();
        for (String name : names) {
            Optional<SealedSecret> sealed = catalog.findSecret(tenant, name);
            sealed.ifPresent(s -> out.put(name, cipher.open(sealedName(tenant, name), s.sealed())));
        }
        return out;
    }

    /**
     * What a value is sealed under (GCM's associated data): the tenant and the name, so a sealed
     * value copied to another row does not open. The default tenant's secrets keep the bare name
     * they were sealed under before tenants existed.
     */
    private static String sealedName(TenantId tenant, String name) {
        return tenant.equals(TenantId.DEFAULT) ? name : tenant.value() + "/" + name;
    }

    public static StasisException notFound(String name) {
        return new StasisException(ErrorCode.SECRET_NOT_FOUND, "no secret named '" + name + "' (GET /v1/secrets lists them)",
                Map.of("secret", name));
    }

    public static void validateName(String name, String field) {
        if (name == null || !NAME.matcher(name).matches())
            throw StasisException.invalid(field, "a secret name is 1-64 letters, digits and underscores, not starting with a digit");
    }

    private static void validateValue(String value) {
        if (value == null || value.isEmpty()) throw StasisException.invalid("value", "is required and may not be empty");
        if (value.getBytes(StandardCharsets.UTF_8).length > MAX_VALUE_BYTES)
            throw StasisException.invalid("value", "is longer than " + MAX_VALUE_BYTES + " bytes (64 KiB)");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\r' || c == '\n' || c == 0) throw StasisException.invalid("value", "may not contain CR, LF or NUL: it goes into an HTTP header");
        }
    }
}

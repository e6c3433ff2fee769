package io.stasis.catalog.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.secret.SecretCipher;
import io.stasis.core.secret.SecretService;
import io.stasis.core.tenant.TenantId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/** Sealed secret values in the file, and header rules in stored network policies, old rows included (the secrets table's contract is in testkit's suites). */
class SqliteSecretsTest extends FreshCatalog {
    @Test
    void aPolicyKeepsItsHeaderRulesAndOldRowsReadWithout() {
        var egress = new EgressPolicy(EgressPolicy.Action.DENY, List.of(EgressRule.parse("*.example.com", "allow")), List.of());
        var policy = new NetworkPolicy(egress, List.of(HeaderRule.of("api.example.com",
                Map.of("Authorization", "Bearer {{secret:TOKEN}}"), "rules[0]")));
        var json = NetworkJson.toJson(policy);
        assertThat(NetworkJson.fromJson(json)).isEqualTo(policy);
        assertThat(json).contains("{{secret:TOKEN}}");

        var old = NetworkJson.fromJson("{\"egress\":{\"default\":\"deny\",\"allow\":[\"*.example.com\"],\"deny\":[]}}");
        assertThat(old).isEqualTo(new NetworkPolicy(egress));
    }

    @Test
    void aCopiedDatabaseDoesNotRevealTheValueAndAnotherKeyCannotOpenIt() throws Exception {
        var secrets = new SecretService(catalog, randomCipher(), Clock.systemUTC());
        String value = "sk-live-" + "0123456789abcdef".repeat(4);
        secrets.put(TenantId.DEFAULT, "TOKEN", value);
        assertThat(secrets.values(TenantId.DEFAULT, List.of("TOKEN"))).containsEntry("TOKEN", value);
        catalog.close();
        for (String file : List.of("catalog.db", "catalog.db-wal")) {
            Path p = dir.resolve(file);
            if (Files.exists(p)) assertThat(new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1)).doesNotContain("sk-live-");
        }
        catalog = SqlCatalog.openSqlite(dir.resolve("catalog.db"));
        var otherKey = new SecretService(catalog, randomCipher(), Clock.systemUTC());
        Assertions.assertThatThrownBy(() -> otherKey.values(TenantId.DEFAULT, List.of("TOKEN")))
                .hasMessageContaining("does not open").hasMessageNotContaining(value);
    }

    private static SecretCipher randomCipher() {
        byte[] key = new byte[SecretCipher.KEY_BYTES];
        new SecureRandom().nextBytes(key);
        return SecretCipher.withKey(key);
    }
}

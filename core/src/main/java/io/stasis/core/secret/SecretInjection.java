package io.stasis.core.secret;

import io.stasis.core.tenant.TenantId;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.InterceptionCa;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.SandboxFiles;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The sandbox side of secret headers: checks that a policy's rules name existing secrets, makes a
 * sandbox with rules trust its interception CA, and tells the egress proxy which headers to set
 * (values filled in) for a name. The values leave this class only towards the proxy.
 */
public final class SecretInjection {
    private final SecretService secrets;
    private final RootStore roots;
    private final SandboxFiles files;
    private final InterceptionCa ca;

    public SecretInjection(SecretService secrets, RootStore roots, SandboxFiles files, InterceptionCa ca) {
        this.secrets = secrets;
        this.roots = roots;
        this.files = files;
        this.ca = ca;
    }

    /** @throws StasisException {@code invalid_request} naming the rules' secrets that do not exist */
    public void validate(TenantId tenant, NetworkPolicy policy) {
        var missing = policy.secretNames().stream().filter(n -> !secrets.exists(tenant, n)).toList();
        if (!missing.isEmpty())
            throw StasisException.invalid("network.rules", "names secrets that do not exist: " + String.join(", ", missing)
                    + " (create them with POST /v1/secrets first)");
    }

    /**
     * Installs the sandbox's CA certificate into its root if the policy has rules (see
     * {@link TrustStoreFiles}); {@code inheritFrom}: a memory fork's parent, whose CA it keeps.
     */
    public void prepare(SandboxId id, NetworkPolicy policy, Optional<SandboxId> inheritFrom) {
        if (policy.rules().isEmpty()) return;
        var root = roots.root(id).orElseThrow(() -> StasisException.runtimeFailed(id.value(), "trust the egress CA", "the sandbox has no root", null));
        TrustStoreFiles.install(files, root, ca.certificatePem(id, inheritFrom));
    }

    public void forget(SandboxId id) {
        ca.forget(id);
    }

    /**
     * What the proxy does for a TLS connection presenting {@code name}: the headers to set, or the
     * secrets that are missing (the proxy then answers 502 naming them).
     */
    public record Resolved(String domain, Map<String, String> headers, List<String> missingSecrets) {
        /** Never the values. */
        @Override
        public String toString() {
            return "Resolved[" + domain + ", headers " + headers.keySet() + ", missing " + missingSecrets + "]";
        }
    }

    /** Empty when no rule matches {@code name}: the connection passes through uninspected. */
    public Optional<Resolved> resolve(TenantId tenant, NetworkPolicy policy, String name) {
        var rule = policy.ruleFor(name);
        if (rule.isEmpty()) return Optional.empty();
        var names = rule.get().secretNames();
        var values = secrets.values(tenant, names);
        var missing = new ArrayList<String>();
        for (String n : names) if (!values.containsKey(n)) missing.add(n);
        var headers = rule.get().expand(values).orElse(Map.of());
        return Optional.of(new Resolved(rule.get().domain().pattern(), headers, List.copyOf(missing)));
    }
}

package io.stasis.core.auth;

import io.stasis.core.tenant.TenantId;

/** Who makes a request, by the credential it presented. */
public sealed interface Caller {
    /** The tenant whose resources the caller acts on. */
    TenantId tenant();

    /** The credential's public id, for logs; never its secret. */
    String credentialId();

    /** The operator's root key: the default tenant's resources, and the tenants themselves. */
    record Root(ApiKey key) implements Caller {
        @Override
        public TenantId tenant() {
            return key.tenant();
        }

        @Override
        public String credentialId() {
            return key.id();
        }
    }

    /** A tenant's API key: everything of that tenant, nothing else. */
    record Member(ApiKey key) implements Caller {
        @Override
        public TenantId tenant() {
            return key.tenant();
        }

        @Override
        public String credentialId() {
            return key.id();
        }
    }

    /** A scoped token: what its permissions allow on its one resource. */
    record Token(ScopedToken token) implements Caller {
        @Override
        public TenantId tenant() {
            return token.tenant();
        }

        @Override
        public String credentialId() {
            return token.id();
        }
    }
}

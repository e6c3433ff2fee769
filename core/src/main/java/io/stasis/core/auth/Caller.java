package io.stasis.core.auth;

import io.stasis.core.tenant.TenantId;

/** Who makes a request, by the credential it presented. */
public sealed interface Caller {
    /** The tenant whose resources the caller acts on. */
    TenantId tenant();

    /** The credential's public id, for logs; never its secret. */
    String credentialId();

    /** Whether it is the operator's root key, which also manages tenants. */
    default boolean isRoot() {
        return false;
    }

    /** An API key: everything of its tenant, nothing else; the root key acts for the default tenant. */
    record Key(ApiKey key) implements Caller {
        @Override
        public TenantId tenant() {
            return key.tenant();
        }

        @Override
        public String credentialId() {
            return key.id();
        }

        @Override
        public boolean isRoot() {
            return key.root();
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

package io.stasis.core.auth;

import io.stasis.core.sandbox.SandboxId;
import java.util.Objects;

/** The one resource a scoped token is for. */
public sealed interface TokenScope {
    Permission.Target target();

    /** The id as the API shows it. */
    String resourceId();

    record Sandbox(SandboxId id) implements TokenScope {
        public Sandbox {
            Objects.requireNonNull(id);
        }

        @Override
        public Permission.Target target() {
            return Permission.Target.SANDBOX;
        }

        @Override
        public String resourceId() {
            return id.value();
        }
    }

    record Volume(String id) implements TokenScope {
        public Volume {
            Objects.requireNonNull(id);
        }

        @Override
        public Permission.Target target() {
            return Permission.Target.VOLUME;
        }

        @Override
        public String resourceId() {
            return id;
        }
    }
}

package io.stasis.core.spi;

/**
 * Durable metadata, as one store: each role interface is one concern, and a service that needs one
 * concern takes that role only. Writes are atomic and durable when the call returns.
 * Implementations are thread-safe.
 */
public interface Catalog
        extends SandboxCatalog,
                OperationJournal,
                NetworkCatalog,
                CheckpointCatalog,
                EventCatalog,
                CredentialCatalog,
                TenantCatalog,
                PreviewCatalog,
                SecretCatalog,
                NodeCatalog,
                AutoCloseable {
    @Override
    void close();
}

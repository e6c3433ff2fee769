package io.stasis.testkit;

import io.stasis.core.spi.BucketCatalog;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.VolumeCatalog;
import org.junit.jupiter.api.Nested;

/**
 * Every catalog suite, each on a fresh catalog from {@link #newCatalog}: a runner extends this once
 * per catalog (SQLite, PostgreSQL, the in-memory fake), so that all of them run the same suites.
 *
 * @param <C> the catalog, with its volume and bucket roles
 */
public abstract class CatalogContracts<C extends Catalog & VolumeCatalog & BucketCatalog> {
    /** A new, empty catalog for one test: no records but the default tenant. */
    protected abstract C newCatalog();

    @Nested
    class Sandboxes extends CatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return CatalogContracts.this.newCatalog();
        }
    }

    @Nested
    class Checkpoints extends CheckpointCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return CatalogContracts.this.newCatalog();
        }
    }

    @Nested
    class Events extends EventCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return CatalogContracts.this.newCatalog();
        }
    }

    @Nested
    class Tenants extends TenantCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return CatalogContracts.this.newCatalog();
        }
    }

    @Nested
    class Nodes extends NodeCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return CatalogContracts.this.newCatalog();
        }
    }

    @Nested
    class Volumes extends VolumeCatalogSuite<C> {
        @Override
        protected C newCatalog() {
            return CatalogContracts.this.newCatalog();
        }
    }

    @Nested
    class Buckets extends BucketCatalogSuite<C> {
        @Override
        protected C newCatalog() {
            return CatalogContracts.this.newCatalog();
        }
    }
}

package io.stasis.testkit.fake;

import io.stasis.core.spi.Catalog;
import io.stasis.testkit.BucketCatalogSuite;
import io.stasis.testkit.CatalogSuite;
import io.stasis.testkit.CheckpointCatalogSuite;
import io.stasis.testkit.EventCatalogSuite;
import io.stasis.testkit.NodeCatalogSuite;
import io.stasis.testkit.TenantCatalogSuite;
import io.stasis.testkit.VolumeCatalogSuite;
import org.junit.jupiter.api.Nested;

/** The fake passes the suites SQLite passes: what core's tests learn from it holds for the real catalog. */
class InMemoryCatalogContractTest {
    @Nested
    class Sandboxes extends CatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return new InMemoryCatalog();
        }
    }

    @Nested
    class Checkpoints extends CheckpointCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return new InMemoryCatalog();
        }
    }

    @Nested
    class Events extends EventCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return new InMemoryCatalog();
        }
    }

    @Nested
    class Tenants extends TenantCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return new InMemoryCatalog();
        }
    }

    @Nested
    class Nodes extends NodeCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return new InMemoryCatalog();
        }
    }

    @Nested
    class Volumes extends VolumeCatalogSuite<InMemoryCatalog> {
        @Override
        protected InMemoryCatalog newCatalog() {
            return new InMemoryCatalog();
        }
    }

    @Nested
    class Buckets extends BucketCatalogSuite<InMemoryCatalog> {
        @Override
        protected InMemoryCatalog newCatalog() {
            return new InMemoryCatalog();
        }
    }
}

package io.stasis.catalog.sql;

import io.stasis.core.spi.Catalog;
import io.stasis.testkit.BucketCatalogSuite;
import io.stasis.testkit.CatalogSuite;
import io.stasis.testkit.CheckpointCatalogSuite;
import io.stasis.testkit.EventCatalogSuite;
import io.stasis.testkit.NodeCatalogSuite;
import io.stasis.testkit.TenantCatalogSuite;
import io.stasis.testkit.VolumeCatalogSuite;
import java.nio.file.Path;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.io.TempDir;

/** The catalog suites on a fresh SQLite file per test: the behaviour the in-memory fake copies. */
class SqliteCatalogContractTest {
    @TempDir
    Path dir;

    private SqlCatalog open() {
        return SqlCatalog.openSqlite(dir.resolve("catalog.db"));
    }

    @Nested
    class Sandboxes extends CatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return open();
        }
    }

    @Nested
    class Checkpoints extends CheckpointCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return open();
        }
    }

    @Nested
    class Events extends EventCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return open();
        }
    }

    @Nested
    class Tenants extends TenantCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return open();
        }
    }

    @Nested
    class Nodes extends NodeCatalogSuite {
        @Override
        protected Catalog newCatalog() {
            return open();
        }
    }

    @Nested
    class Volumes extends VolumeCatalogSuite<SqlCatalog> {
        @Override
        protected SqlCatalog newCatalog() {
            return open();
        }
    }

    @Nested
    class Buckets extends BucketCatalogSuite<SqlCatalog> {
        @Override
        protected SqlCatalog newCatalog() {
            return open();
        }
    }
}

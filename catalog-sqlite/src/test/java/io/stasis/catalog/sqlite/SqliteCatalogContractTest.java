package io.stasis.catalog.sqlite;

import io.stasis.core.spi.Catalog;
import io.stasis.testkit.BucketCatalogSuite;
import io.stasis.testkit.CatalogSuite;
import io.stasis.testkit.VolumeCatalogSuite;
import java.nio.file.Path;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.io.TempDir;

/** The catalog suites on a fresh SQLite file per test: the behaviour the in-memory fake copies. */
class SqliteCatalogContractTest {
    @Nested
    class Sandboxes extends CatalogSuite {
        @TempDir
        Path dir;

        @Override
        protected Catalog newCatalog() {
            return SqliteCatalog.open(dir.resolve("catalog.db"));
        }
    }

    @Nested
    class Volumes extends VolumeCatalogSuite<SqliteCatalog> {
        @TempDir
        Path dir;

        @Override
        protected SqliteCatalog newCatalog() {
            return SqliteCatalog.open(dir.resolve("catalog.db"));
        }
    }

    @Nested
    class Buckets extends BucketCatalogSuite<SqliteCatalog> {
        @TempDir
        Path dir;

        @Override
        protected SqliteCatalog newCatalog() {
            return SqliteCatalog.open(dir.resolve("catalog.db"));
        }
    }
}

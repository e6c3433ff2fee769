package io.stasis.catalog.sql;

import io.stasis.testkit.CatalogContracts;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The catalog suites on a fresh SQLite file per test: the behaviour the in-memory fake copies. */
class SqliteCatalogContractTest extends CatalogContracts<SqlCatalog> {
    @TempDir
    Path dir;

    @Override
    protected SqlCatalog newCatalog() {
        return SqlCatalog.openSqlite(dir.resolve("catalog.db"));
    }
}

package io.stasis.catalog.sql;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** A test class's catalog: a fresh database in a temporary directory for each test, closed after it. */
abstract class FreshCatalog {
    @TempDir
    Path dir;
    SqlCatalog catalog;

    @BeforeEach
    void openCatalog() {
        catalog = SqlCatalog.openSqlite(dir.resolve("catalog.db"));
    }

    @AfterEach
    void closeCatalog() {
        catalog.close();
    }
}

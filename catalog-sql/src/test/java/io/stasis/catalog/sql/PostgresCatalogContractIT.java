package io.stasis.catalog.sql;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.testkit.CatalogContracts;
import io.stasis.testkit.PostgresTestServer;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** The catalog suites on a real PostgreSQL server, a fresh database per test: the same contract SQLite and the in-memory fake pass. */
@Tag("root")
class PostgresCatalogContractIT extends CatalogContracts<SqlCatalog> {
    static PostgresTestServer server;

    @BeforeAll
    static void startServer() throws Exception {
        assumeTrue(PostgresTestServer.installed(), "PostgreSQL is not installed");
        server = PostgresTestServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) server.close();
    }

    @Override
    protected SqlCatalog newCatalog() {
        return SqlCatalog.openPostgres(PostgresLocation.parse(server.newDatabase(), Optional.empty()), EventRetention.DEFAULT, "node-a");
    }
}

package io.stasis.catalog.sql;


import io.stasis.testkit.CatalogContracts;
import io.stasis.testkit.PostgresExtension;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The catalog suites on a real PostgreSQL server, a fresh database per test: the same contract SQLite and the in-memory fake pass. */
@Tag("root")
class PostgresCatalogContractIT extends CatalogContracts<SqlCatalog> {
    @RegisterExtension
    static final PostgresExtension postgres = new PostgresExtension();

    @Override
    protected SqlCatalog newCatalog() {
        return SqlCatalog.openPostgres(PostgresLocation.parse(postgres.server().newDatabase(), Optional.empty()), EventRetention.DEFAULT, "node-a");
    }
}

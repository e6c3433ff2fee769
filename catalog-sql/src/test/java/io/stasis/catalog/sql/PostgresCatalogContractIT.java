package io.stasis.catalog.sql;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.spi.Catalog;
import io.stasis.testkit.BucketCatalogSuite;
import io.stasis.testkit.CatalogSuite;
import io.stasis.testkit.CheckpointCatalogSuite;
import io.stasis.testkit.EventCatalogSuite;
import io.stasis.testkit.NodeCatalogSuite;
import io.stasis.testkit.PostgresTestServer;
import io.stasis.testkit.TenantCatalogSuite;
import io.stasis.testkit.VolumeCatalogSuite;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/** The catalog suites on a real PostgreSQL server, a fresh database per test: the same contract SQLite and the in-memory fake pass. */
@Tag("root")
class PostgresCatalogContractIT {
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

    static SqlCatalog open() {
        return SqlCatalog.openPostgres(PostgresLocation.parse(server.newDatabase(), Optional.empty()), EventRetention.DEFAULT, "node-a");
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

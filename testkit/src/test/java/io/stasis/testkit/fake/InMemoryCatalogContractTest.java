package io.stasis.testkit.fake;

import io.stasis.testkit.CatalogContracts;

/** The fake passes the suites SQLite and PostgreSQL pass: what core's tests learn from it holds for the real catalog. */
class InMemoryCatalogContractTest extends CatalogContracts<InMemoryCatalog> {
    @Override
    protected InMemoryCatalog newCatalog() {
        return new InMemoryCatalog();
    }
}

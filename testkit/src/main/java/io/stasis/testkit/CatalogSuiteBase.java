package io.stasis.testkit;

import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.Tenant;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the catalog suites share: a fresh catalog per test from {@link #newCatalog}, closed after
 * it, and a few helpers.
 *
 * @param <C> what the suite needs the catalog to be: a {@link Catalog}, and for some suites also a
 *            {@code VolumeCatalog} or {@code BucketCatalog}
 */
public abstract class CatalogSuiteBase<C extends Catalog> {
    /** After the default tenant's creation (a fresh catalog makes it as it opens), so new tenants list after it. */
    protected static final Instant LATER = Instant.now().plusSeconds(60);

    private C catalog;

    /** A new, empty catalog for one test: no records but the default tenant. */
    protected abstract C newCatalog();

    protected C catalog() {
        return catalog;
    }

    @BeforeEach
    void openCatalog() {
        catalog = newCatalog();
    }

    @AfterEach
    void closeCatalog() {
        catalog.close();
    }

    /** Records a tenant with no limits, made {@link #LATER}. */
    protected Tenant insertTenant(String name) {
        var t = CatalogFixtures.tenant(name, LATER);
        catalog.insertTenant(t);
        return t;
    }

    /** Starts every task at once on its own virtual thread and returns their results in order. */
    protected static List<Object> runConcurrently(List<Callable<Object>> tasks) throws InterruptedException, ExecutionException {
        var results = new ArrayList<Object>();
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var start = new CountDownLatch(1); // lines the threads up so they really overlap
            var futures = new ArrayList<Future<Object>>();
            for (var task : tasks) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return task.call();
                }));
            }
            start.countDown();
            for (var f : futures) results.add(f.get());
        }
        return results;
    }
}

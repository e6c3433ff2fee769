package io.stasis.testkit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link PostgresTestServer} for one test class: started before its tests, which are skipped
 * where PostgreSQL is not installed, and stopped after them. Register it in a static field:
 * {@code @RegisterExtension static final PostgresExtension postgres = new PostgresExtension();}
 */
public final class PostgresExtension implements BeforeAllCallback, AfterAllCallback {
    private PostgresTestServer server;
    private Class<?> owner; // the class that started it: its @Nested classes see the same callbacks

    /** The running server; only within the class's tests. */
    public PostgresTestServer server() {
        if (server == null) throw new IllegalStateException("the PostgreSQL test server runs only while the test class does");
        return server;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (server != null) return; // a nested class: the enclosing class's server serves it
        Assumptions.assumeTrue(PostgresTestServer.installed(), "PostgreSQL is not installed (apt-get install postgresql)");
        server = PostgresTestServer.start();
        owner = context.getRequiredTestClass();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server == null || context.getRequiredTestClass() != owner) return;
        server.close();
        server = null;
    }
}

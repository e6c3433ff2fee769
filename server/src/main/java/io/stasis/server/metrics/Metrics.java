package io.stasis.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.stasis.core.sandbox.Sandbox;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The service's Prometheus metrics: HTTP requests by route and status, sandbox creation and exec
 * durations, sandboxes by state, per tenant its sandboxes by state and its calls by outcome, and
 * the JVM's own. (Names avoid the suffixes Prometheus reserves.)
 */
public final class Metrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final Supplier<List<Sandbox>> sandboxes;
    private final MultiGauge tenantSandboxes;

    public Metrics(Supplier<List<Sandbox>> sandboxes) {
        this.sandboxes = sandboxes;
        this.tenantSandboxes = MultiGauge.builder("stasis.tenant.sandboxes").description("each tenant's sandboxes by state")
                .register(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        gc.bindTo(registry);
        for (String state : List.of("running", "paused", "standby", "hibernated", "stopped"))
            Gauge.builder("stasis.sandboxes", () -> sandboxes.get().stream().filter(s -> s.state().wireName().equals(state)).count())
                    .tag("state", state).description("sandboxes by state").register(registry);
    }

    public void httpRequest(String method, String route, int status, long nanos) {
        Timer.builder("stasis.http.requests").tag("method", method).tag("route", route).tag("status", Integer.toString(status))
                .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A call of {@code tenant}'s, counted by its outcome: ok, client_error, rate_limited or server_error. */
    public void tenantRequest(String tenant, int status) {
        String outcome = status < 400 ? "ok" : status == 429 ? "rate_limited" : status < 500 ? "client_error" : "server_error";
        Counter.builder("stasis.tenant.requests").tag("tenant", tenant).tag("outcome", outcome).register(registry).increment();
    }

    public void sandboxCreated(String template, long nanos) {
        Timer.builder("stasis.sandbox.create").tag("template", template).publishPercentileHistogram()
                .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }

    public void execFinished(Duration duration) {
        Timer.builder("stasis.exec").publishPercentileHistogram().register(registry).record(duration);
    }

    /** The metrics now; each tenant's sandboxes counted afresh (a tenant with none left drops out). */
    public String scrape() {
        var counts = sandboxes.get().stream().collect(Collectors.groupingBy(s -> Tags.of("tenant", s.tenant().value(), "state",
                s.state().wireName()), Collectors.counting()));
        tenantSandboxes.register(counts.entrySet().stream().map(e -> MultiGauge.Row.of(e.getKey(), e.getValue())).toList(), true);
        return registry.scrape();
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}

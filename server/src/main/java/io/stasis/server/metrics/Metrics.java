package io.stasis.server.metrics;

import io.micrometer.core.instrument.Gauge;
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

/**
 * The service's Prometheus metrics: HTTP requests by route and status, sandbox creation and exec
 * durations, sandboxes by state, and the JVM's own. (Names avoid the suffixes Prometheus reserves.)
 */
public final class Metrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();

    public Metrics(Supplier<List<Sandbox>> sandboxes) {
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

    public void sandboxCreated(String template, long nanos) {
        Timer.builder("stasis.sandbox.create").tag("template", template).publishPercentileHistogram()
                .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }

    public void execFinished(Duration duration) {
        Timer.builder("stasis.exec").publishPercentileHistogram().register(registry).record(duration);
    }

    public String scrape() {
        return registry.scrape();
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}

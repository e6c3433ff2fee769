package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

class RetriesTest {
    private static final String BUSY = "{\"error\":{\"code\":\"host_busy\",\"message\":\"busy\",\"details\":{}}}";
    private static final String HEALTHY = "{\"status\":\"ok\"}";

    @AutoClose
    final FakeApi api = FakeApi.start();

    /** Tiny pauses so that the tests take milliseconds. */
    @AutoClose
    final StasisClient client = StasisClient.builder().url(api.url()).apiKey("sk_test")
            .requestTimeout(Duration.ofSeconds(5))
            .retryPolicy(RetryPolicy.defaults().withBackoff(Duration.ofMillis(1), Duration.ofMillis(5)))
            .build();

    /** Answers with these statuses in turn (then 200 with {@code ok}), each error as host_busy. */
    private static FakeApi.Handler statuses(String ok, Integer... statuses) {
        Queue<Integer> left = new ArrayDeque<>(List.of(statuses));
        return (request, exchange) -> {
            Integer status = left.poll();
            if (status == null) FakeApi.respond(exchange, 200, "application/json", ok);
            else FakeApi.respond(exchange, status, "application/json", BUSY);
        };
    }

    /** Answers the first request with {@code first}, every later one 200 with {@code ok}. */
    private static FakeApi.Handler firstThen(FakeApi.Handler first, String ok) {
        var once = new AtomicBoolean();
        return (request, exchange) -> {
            if (once.compareAndSet(false, true)) first.handle(request, exchange);
            else FakeApi.respond(exchange, 200, "application/json", ok);
        };
    }

    private long requests(String method, String path) {
        return api.requests.stream().filter(r -> r.method().equals(method) && r.path().equals(path)).count();
    }

    @Test
    void aGetIsRetriedAfter503AndSucceeds() {
        api.on("GET /healthz", statuses(HEALTHY, 503, 502));

        assertThat(client.health().status()).isEqualTo("ok");
        assertThat(requests("GET", "/healthz")).isEqualTo(3);
    }

    @Test
    void aPostIsSentOnce() {
        api.on("POST /v1/secrets", statuses("{}", 503));

        assertThatThrownBy(() -> client.secrets().set("token", "v")).isInstanceOf(ServiceUnavailableException.class);
        assertThat(requests("POST", "/v1/secrets")).isEqualTo(1);
    }

    @Test
    void aLifecycleActionIsIdempotentSoRetried() {
        api.on("POST /v1/sandboxes/my-agent/pause", statuses(StasisClientTest.SANDBOX, 504));

        assertThat(client.sandboxes().pause("my-agent").id()).isEqualTo("sbx_0f3k2m9x8c7v6b5n");
        assertThat(requests("POST", "/v1/sandboxes/my-agent/pause")).isEqualTo(2);
    }

    @Test
    void givesUpAfterMaxAttemptsWithTheLastError() {
        var count = new int[1];
        api.on("GET /healthz", (request, exchange) -> FakeApi.respond(exchange, 503, "application/json",
                BUSY.replace("busy", "busy " + ++count[0])));

        assertThatThrownBy(client::health)
                .isInstanceOfSatisfying(ServiceUnavailableException.class, e -> {
                    assertThat(e.errorMessage()).isEqualTo("busy 3");
                    assertThat(e.getSuppressed()).hasSize(2);
                });
        assertThat(requests("GET", "/healthz")).isEqualTo(3);
    }

    @Test
    void maxAttemptsIsConfigurable() {
        api.on("GET /healthz", statuses(HEALTHY, 503, 503, 503, 503));
        try (var patient = StasisClient.builder().url(api.url())
                .retryPolicy(RetryPolicy.defaults().withBackoff(Duration.ZERO, Duration.ofMillis(1)).withMaxAttempts(5))
                .build()) {
            assertThat(patient.health().status()).isEqualTo("ok");
        }
        assertThat(requests("GET", "/healthz")).isEqualTo(5);
    }

    @Test
    void errorsThatWillNotPassAreNotRetried() {
        api.on("GET /healthz", (request, exchange) -> FakeApi.respond(exchange, 404, "application/json",
                "{\"error\":{\"code\":\"not_found\",\"message\":\"no\",\"details\":{}}}"));

        assertThatThrownBy(client::health).isInstanceOf(NotFoundException.class);
        assertThat(requests("GET", "/healthz")).isEqualTo(1);
    }

    @Test
    void retryAfterIsHonoured() {
        api.on("GET /healthz", firstThen((request, exchange) -> {
            exchange.getResponseHeaders().set("Retry-After", "1");
            FakeApi.respond(exchange, 429, "application/json", BUSY);
        }, HEALTHY));

        long start = System.nanoTime();
        assertThat(client.health().status()).isEqualTo("ok");
        // The backoff alone would have waited at most 5 ms.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(950));
    }

    @Test
    void aRateLimitedPostIsRetriedAfterTheWaitTheServerNamedToTheMillisecond() {
        api.on("POST /v1/secrets", firstThen((request, exchange) -> {
            exchange.getResponseHeaders().set("Retry-After", "1");
            FakeApi.respond(exchange, 429, "application/json",
                    "{\"error\":{\"code\":\"rate_limited\",\"message\":\"too many\",\"details\":{\"retryAfterMs\":40,\"limits\":[\"tenant\"]}}}");
        }, "{}"));

        long start = System.nanoTime();
        client.secrets().set("token", "v");
        assertThat(requests("POST", "/v1/secrets")).as("nothing was done the first time: sent again").isEqualTo(2);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(40)).isLessThan(Duration.ofMillis(900));
    }

    @Test
    void aRateLimitThatDoesNotPassIsARateLimitedExceptionWithItsWait() {
        api.on("POST /v1/secrets", (request, exchange) -> FakeApi.respond(exchange, 429, "application/json",
                "{\"error\":{\"code\":\"rate_limited\",\"message\":\"too many\",\"details\":{\"retryAfterMs\":2,\"limits\":[\"credential\"]}}}"));

        assertThatThrownBy(() -> client.secrets().set("token", "v")).isInstanceOfSatisfying(RateLimitedException.class,
                e -> assertThat(e.retryAfter()).contains(Duration.ofMillis(2)));
        assertThat(requests("POST", "/v1/secrets")).isEqualTo(3);
    }

    @Test
    void aRetryAfterBeyondTheTimeBudgetFailsAtOnce() {
        api.on("GET /healthz", (request, exchange) -> {
            exchange.getResponseHeaders().set("Retry-After", "120");
            FakeApi.respond(exchange, 429, "application/json",
                    "{\"error\":{\"code\":\"quota_exceeded\",\"message\":\"slow down\",\"details\":{}}}");
        });

        assertThatThrownBy(client::health).isInstanceOf(QuotaExceededException.class);
        assertThat(requests("GET", "/healthz")).isEqualTo(1);
    }

    @Test
    void aConnectionFailureIsRetried() {
        // Closes the connection without a response: the client sees it break before any header.
        api.on("GET /healthz", firstThen((request, exchange) -> exchange.close(), HEALTHY));

        assertThat(client.health().status()).isEqualTo("ok");
        assertThat(requests("GET", "/healthz")).isEqualTo(2);
    }

    @Test
    void anUploadFromAStreamIsSentOnce() {
        api.on("PUT /v1/sandboxes/s/files", statuses("{}", 503));

        var content = new ByteArrayInputStream("hi".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> client.sandboxes().files("s").write("/a", content))
                .isInstanceOf(ServiceUnavailableException.class);
        assertThat(requests("PUT", "/v1/sandboxes/s/files")).isEqualTo(1);
    }

    @Test
    void noRetriesWithPolicyNone() {
        api.on("GET /healthz", statuses(HEALTHY, 503));
        try (var once = StasisClient.builder().url(api.url()).retryPolicy(RetryPolicy.none()).build()) {
            assertThatThrownBy(once::health).isInstanceOf(ServiceUnavailableException.class);
        }
        assertThat(requests("GET", "/healthz")).isEqualTo(1);
    }

    @Test
    void lifecycleActionsWaitForTheOperationTimeoutOtherCallsForTheRequestTimeout() {
        FakeApi.Handler slow = (request, exchange) -> {
            try {
                Thread.sleep(300); // a host that takes its time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FakeApi.respond(exchange, 200, "application/json", StasisClientTest.SANDBOX);
        };
        api.on("POST /v1/sandboxes/a/hibernate", slow).on("GET /v1/sandboxes/a", slow);
        try (var impatient = StasisClient.builder().url(api.url()).retryPolicy(RetryPolicy.none())
                .requestTimeout(Duration.ofMillis(100)).operationTimeout(Duration.ofSeconds(5)).build()) {
            assertThat(impatient.sandboxes().hibernate("a").id()).isEqualTo("sbx_0f3k2m9x8c7v6b5n");
            assertThatThrownBy(() -> impatient.sandboxes().get("a")).isInstanceOf(StasisTimeoutException.class);
        }
    }

    @Test
    void readsBothFormsOfRetryAfter() {
        assertThat(HttpTransport.retryAfter("3")).isEqualTo(Duration.ofSeconds(3));
        assertThat(HttpTransport.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT")).isEqualTo(Duration.ZERO);
        assertThat(HttpTransport.retryAfter("soon")).isNull();
        assertThat(HttpTransport.retryAfter(null)).isNull();
    }

    @Test
    void backoffDoublesUpToTheMaximum() {
        var policy = RetryPolicy.defaults().withBackoff(Duration.ofMillis(100), Duration.ofMillis(350));
        assertThat(policy.backoff(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.backoff(2)).isEqualTo(Duration.ofMillis(200));
        assertThat(policy.backoff(3)).isEqualTo(Duration.ofMillis(350));
        assertThat(policy.backoff(60)).isEqualTo(Duration.ofMillis(350));
        assertThatThrownBy(() -> policy.withMaxAttempts(0)).isInstanceOf(IllegalArgumentException.class);
    }
}

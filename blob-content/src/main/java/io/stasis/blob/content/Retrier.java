package io.stasis.blob.content;

import java.io.UncheckedIOException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs backend calls under a {@link RetryPolicy}. Only {@link UncheckedIOException} is retried:
 * the BlobStore SPI reserves it for failures that may pass. Anything else, errors included (a
 * test's simulated crash), goes straight through.
 */
final class Retrier {
    private static final Logger log = LoggerFactory.getLogger(Retrier.class);

    private final RetryPolicy policy;

    Retrier(RetryPolicy policy) {
        this.policy = policy;
    }

    /**
     * The result of {@code action}, tried up to the policy's attempts; {@code onRetry} hears of
     * each retry. After the last failure: {@code runtime_failed} with the step, key and attempts.
     */
    <T> T call(String step, String key, IntConsumer onRetry, Supplier<T> action) {
        for (int attempt = 1; ; attempt++) {
            try {
                return action.get();
            } catch (UncheckedIOException e) {
                if (attempt >= policy.maxAttempts()) throw ContentErrors.backendFailed(step, key, attempt, e);
                long wait = policy.backoff(attempt).toMillis();
                wait = wait / 2 + (wait > 1 ? ThreadLocalRandom.current().nextLong(wait / 2 + 1) : 0);
                log.atWarn().addKeyValue("step", step).addKeyValue("key", key).addKeyValue("attempt", attempt)
                        .addKeyValue("retryInMillis", wait).addKeyValue("error", e.getMessage()).log("blob store call failed, retrying");
                onRetry.accept(attempt);
                try {
                    Thread.sleep(wait);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    var failure = ContentErrors.interrupted(step, key);
                    failure.addSuppressed(e);
                    throw failure;
                }
            }
        }
    }

    void run(String step, String key, IntConsumer onRetry, Runnable action) {
        call(step, key, onRetry, () -> {
            action.run();
            return null;
        });
    }
}

package io.stasis.sdk;

import java.time.Instant;

/**
 * A secret as the service shows it: its name and when its value was last set. Values are
 * write-only: no answer holds them.
 */
public record SecretInfo(String name, Instant createdAt) {
}

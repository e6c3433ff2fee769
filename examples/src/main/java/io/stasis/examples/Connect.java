package io.stasis.examples;

import io.stasis.sdk.StasisClient;

/** The client every example uses: the server from {@code STASIS_URL}, the key from {@code STASIS_API_KEY}. */
final class Connect {
    private Connect() {
    }

    /** {@code STASIS_URL} (default {@code http://127.0.0.1:7070}) and {@code STASIS_API_KEY}. */
    static StasisClient fromEnvironment() {
        String url = System.getenv().getOrDefault("STASIS_URL", "http://127.0.0.1:7070");
        return StasisClient.connect(url, System.getenv("STASIS_API_KEY"));
    }
}

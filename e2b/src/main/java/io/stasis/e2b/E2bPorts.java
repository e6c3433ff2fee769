package io.stasis.e2b;

import io.stasis.sdk.Preview;
import io.stasis.sdk.PreviewRequest;
import io.stasis.sdk.StasisClient;

/**
 * A sandbox's ports as E2B exposes them ({@code sandbox.getHost(port)} is {@code PORT-ID.DOMAIN}):
 * one preview of every port at Stasis's preview listener, public unless the sandbox was made
 * without public traffic; then requests carry the answered token as {@code E2b-Traffic-Access-Token}.
 *
 * @param domain       the preview listener's domain and port, {@code DOMAIN:PORT}; null when the ports are not exposed
 * @param trafficToken the token a private exposure needs, or null
 */
record E2bPorts(String domain, String trafficToken) {
    /** A preview's port that stands for every port of its sandbox. */
    private static final int EVERY_PORT = 0;

    /** Exposes every port of the sandbox. */
    static E2bPorts expose(StasisClient client, String sandbox, boolean isPublic) {
        var preview = client.sandboxes().previews(sandbox).create(PreviewRequest.builder(EVERY_PORT).isPublic(isPublic).build());
        return new E2bPorts(domainOf(preview.url()), preview.token());
    }

    /** The ports as exposed at create; a private exposure gets a new token (the first was shown once). */
    static E2bPorts of(StasisClient client, String sandbox) {
        var every = client.sandboxes().previews(sandbox).list().stream().filter(p -> p.port() == EVERY_PORT).toList();
        if (every.isEmpty()) return new E2bPorts(null, null);
        if (every.stream().anyMatch(Preview::isPublic)) return new E2bPorts(domainOf(every.getFirst().url()), null);
        return expose(client, sandbox, false);
    }

    /** {@code DOMAIN:PORT} of a host-based preview URL, {@code http://{port}-sbx-abc.DOMAIN:PORT/}. */
    static String domainOf(String url) {
        String host = url.replaceFirst("^https?://", "");
        if (host.endsWith("/")) host = host.substring(0, host.length() - 1);
        int dot = host.indexOf('.');
        return dot < 0 ? host : host.substring(dot + 1);
    }
}

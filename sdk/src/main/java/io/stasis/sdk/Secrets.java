package io.stasis.sdk;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The service's secrets, from {@link StasisClient#secrets()}: values the egress proxy adds to
 * sandboxes' HTTPS requests through a network policy's header rules
 * ({@code "Authorization": "Bearer {{secret:API_TOKEN}}"}), so that the sandbox never holds them.
 *
 * <pre>{@code
 * client.secrets().set("API_TOKEN", System.getenv("API_TOKEN"));
 * client.secrets().list();                   // names only
 * client.secrets().delete("API_TOKEN");
 * }</pre>
 */
public final class Secrets {
    private final HttpTransport transport;

    Secrets(HttpTransport transport) {
        this.transport = transport;
    }

    /**
     * Creates the secret, or replaces its value.
     *
     * @throws InvalidRequestException {@code invalid_request}: a name not of 1-64 letters, digits and underscores
     *                                 (not starting with a digit), an empty value, one over 64 KiB or holding CR, LF or NUL
     */
    public SecretInfo set(String name, String value) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        return transport.json(transport.jsonCall("POST", "/v1/secrets", Map.of("name", name, "value", value)), SecretInfo.class);
    }

    /** Every secret, by name. */
    public List<SecretInfo> list() {
        Page.Body<SecretInfo> body = transport.page(transport.call("GET", "/v1/secrets"), SecretInfo.class);
        return body.items() == null ? List.of() : List.copyOf(body.items());
    }

    /**
     * Deletes a secret. Policies naming it stay; their requests then get a 502 from the proxy.
     *
     * @throws NotFoundException {@code secret_not_found}
     */
    public void delete(String name) {
        transport.discard(transport.call("DELETE", "/v1/secrets/" + Query.encode(name)));
    }
}

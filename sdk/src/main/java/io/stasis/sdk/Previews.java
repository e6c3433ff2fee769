package io.stasis.sdk;

import java.util.List;
import java.util.Objects;

/**
 * The previews of one sandbox, from {@link Sandbox#previews()}: its TCP ports served over HTTP by
 * the service's preview listener.
 *
 * <pre>{@code
 * sandbox.processes().start("python3", "-m", "http.server", "3000");
 * Preview p = sandbox.previews().create(3000);          // private: p.token() is shown only now
 * System.out.println(p.linkWithToken());               // open once in a browser
 * sandbox.previews().delete(p.id());                   // revoked at once
 * }</pre>
 */
public final class Previews {
    private final SandboxCalls calls;

    Previews(SandboxCalls calls) {
        this.calls = calls;
    }

    /** A private preview of {@code port}, without expiry. */
    public Preview create(int port) {
        return create(PreviewRequest.of(port));
    }

    /**
     * Creates a preview. A private one's {@link Preview#token()} is in this answer only.
     *
     * @throws InvalidRequestException {@code invalid_request}: a port outside 1-65535, a time to live not in 1 s to 30 days
     */
    public Preview create(PreviewRequest request) {
        Objects.requireNonNull(request, "request");
        var transport = calls.transport();
        return transport.json(transport.jsonCall("POST", calls.path("/previews"), request), Preview.class);
    }

    /** The sandbox's previews, oldest first, expired ones included; without tokens. */
    public List<Preview> list() {
        var transport = calls.transport();
        Page.Body<Preview> body = transport.page(transport.call("GET", calls.path("/previews")), Preview.class);
        return body.items() == null ? List.of() : List.copyOf(body.items());
    }

    /** @throws NotFoundException {@code preview_not_found} */
    public Preview get(String previewId) {
        var transport = calls.transport();
        return transport.json(transport.call("GET", calls.path("/previews/" + Query.encode(previewId))), Preview.class);
    }

    /**
     * Revokes a preview: no further request passes, and connections it let through are closed.
     *
     * @throws NotFoundException {@code preview_not_found}
     */
    public void delete(String previewId) {
        var transport = calls.transport();
        transport.discard(transport.call("DELETE", calls.path("/previews/" + Query.encode(previewId))));
    }
}

package io.stasis.server.preview;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.http1.RequestHead;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Which sandbox port a request to the preview listener is for, and the target to forward.
 * Host-based: {@code Host: 3000-sbx-abc.example.test} (the sandbox's id in its hostname form, or
 * with its underscore) forwards the target as it is. Path-based: {@code /preview/sbx_abc/3000/rest}
 * forwards {@code /rest}.
 *
 * @param cookiePath the path a token cookie is scoped to: {@code /} for host-based requests, the
 *                   request's own {@code /preview/ID/PORT/} prefix for path-based ones
 */
record PreviewRoute(SandboxId sandbox, int port, String forwardTarget, String cookiePath) {
    static final String PATH_PREFIX = "/preview/";

    /** The route of a request, or empty when it names no sandbox port in either form. */
    static Optional<PreviewRoute> of(RequestHead head, String domain) {
        String target = originForm(head.target());
        var byHost = head.headers().first("Host").flatMap(host -> fromHost(host, domain));
        if (byHost.isPresent()) return Optional.of(new PreviewRoute(byHost.get().sandbox, byHost.get().port, target, "/"));
        if (!target.startsWith(PATH_PREFIX)) return Optional.empty();
        int query = target.indexOf('?');
        String path = query < 0 ? target : target.substring(0, query);
        String[] parts = path.substring(PATH_PREFIX.length()).split("/", 3);
        if (parts.length < 2) return Optional.empty();
        var sandbox = sandboxId(parts[0]);
        var port = port(parts[1]);
        if (sandbox.isEmpty() || port.isEmpty()) return Optional.empty();
        String rest = "/" + (parts.length == 3 ? parts[2] : "") + (query < 0 ? "" : target.substring(query));
        String cookiePath = PATH_PREFIX + parts[0] + "/" + parts[1] + "/";
        return Optional.of(new PreviewRoute(sandbox.get(), port.getAsInt(), rest, cookiePath));
    }

    private record HostMatch(SandboxId sandbox, int port) {
    }

    private static Optional<HostMatch> fromHost(String hostHeader, String domain) {
        String host = hostHeader.strip().toLowerCase(Locale.ROOT);
        int colon = host.lastIndexOf(':');
        if (colon >= 0 && !host.endsWith("]")) host = host.substring(0, colon);
        String suffix = "." + domain.toLowerCase(Locale.ROOT);
        if (!host.endsWith(suffix)) return Optional.empty();
        String label = host.substring(0, host.length() - suffix.length());
        int dash = label.indexOf('-');
        if (dash <= 0 || label.indexOf('.') >= 0) return Optional.empty();
        var port = port(label.substring(0, dash));
        var sandbox = sandboxId(label.substring(dash + 1));
        if (port.isEmpty() || sandbox.isEmpty()) return Optional.empty();
        return Optional.of(new HostMatch(sandbox.get(), port.getAsInt()));
    }

    /** {@code sbx_abc...} or its hostname form {@code sbx-abc...}. */
    static Optional<SandboxId> sandboxId(String text) {
        String id = text.startsWith("sbx-") ? SandboxId.PREFIX + text.substring(4) : text;
        return SandboxId.isValid(id) ? Optional.of(new SandboxId(id)) : Optional.empty();
    }

    private static OptionalInt port(String text) {
        if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(c -> c >= '0' && c <= '9') || text.charAt(0) == '0')
            return OptionalInt.empty();
        int port = Integer.parseInt(text);
        return port <= 65535 ? OptionalInt.of(port) : OptionalInt.empty();
    }

    /** The path and query of a target in absolute form ({@code http://host/p?q}); other targets as they are. */
    private static String originForm(String target) {
        if (!target.regionMatches(true, 0, "http://", 0, 7)) return target;
        int slash = target.indexOf('/', 7);
        return slash < 0 ? "/" : target.substring(slash);
    }
}

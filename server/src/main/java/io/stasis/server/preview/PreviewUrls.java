package io.stasis.server.preview;

import io.stasis.core.preview.Preview;
import io.stasis.core.sandbox.SandboxId;

/**
 * The URLs under which the preview listener serves a sandbox port: host-based
 * ({@code http://3000-sbx-abc.DOMAIN:PORT/}) and path-based ({@code http://DOMAIN:PORT/preview/sbx_abc/3000/}).
 *
 * @param domain       the preview domain: {@code localhost} works in browsers without DNS (every
 *                     {@code *.localhost} is the loopback); elsewhere a wildcard DNS record for it
 * @param listenerPort the preview listener's port (left out of URLs when 80)
 */
public record PreviewUrls(String domain, int listenerPort) {

    /** With {@link Preview#EVERY_PORT}: the URL with {@code {port}} in the place of the port. */
    public String hostUrl(SandboxId sandbox, int port) {
        return "http://" + label(port) + "-" + sandbox.hostname() + "." + domain + portSuffix() + "/";
    }

    public String pathUrl(SandboxId sandbox, int port) {
        return "http://" + domain + portSuffix() + PreviewRoute.PATH_PREFIX + sandbox.value() + "/" + label(port) + "/";
    }

    private static String label(int port) {
        return port == Preview.EVERY_PORT ? "{port}" : Integer.toString(port);
    }

    private String portSuffix() {
        return listenerPort == 80 ? "" : ":" + listenerPort;
    }
}

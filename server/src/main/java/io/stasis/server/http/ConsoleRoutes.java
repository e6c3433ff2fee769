package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.blob.Sha256;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The web console: {@code /} leads to {@code /console/}, a page of plain ES modules served from
 * the server's class path ({@code console/}), and the terminal's xterm.js from its WebJars under
 * {@code /console/vendor/}. No key is needed for these files (they hold nothing of anyone's): the
 * page asks for one and sends it with each API call it makes.
 *
 * <p>Every answer carries a Content Security Policy that lets the page load and call only this
 * origin (no inline script or style, no framing), so a file name or output shown on it cannot run
 * as script. The console's own files are revalidated on each load (their ETag is their digest);
 * the vendor files, whose paths carry their version, are cached for a year.
 */
final class ConsoleRoutes {
    static final String CONTENT_SECURITY_POLICY = String.join("; ",
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
            "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'");
    private static final Pattern ASSET = Pattern.compile("[a-z0-9][a-z0-9_-]*(/[a-z0-9][a-z0-9_-]*)*\\.(html|js|css|svg)");
    /** The vendor files, by the name the console asks for, and where their WebJars keep them. */
    private static final Map<String, String> VENDOR = Map.of(
            "xterm-4.9.0/xterm.js", "META-INF/resources/webjars/xterm/4.9.0/lib/xterm.js",
            "xterm-4.9.0/xterm.css", "META-INF/resources/webjars/xterm/4.9.0/css/xterm.css",
            "xterm-addon-fit-0.3.0/xterm-addon-fit.js", "META-INF/resources/webjars/xterm-addon-fit/0.3.0/lib/xterm-addon-fit.js");
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8", "js", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8", "svg", "image/svg+xml");

    /** A file as served: its bytes, type and digest. */
    private record Asset(byte[] bytes, String contentType, String etag) {
    }

    /** The files asked for so far; only ones that exist, so that no one can fill it with names. */
    private final Map<String, Asset> assets = new ConcurrentHashMap<>();

    void register(RoutesConfig routes) {
        routes.get("/", ctx -> ctx.redirect("/console/"));
        routes.get("/console/", ctx -> serve(ctx, "console/index.html", false));
        routes.get("/console/vendor/<file>", ctx -> {
            String resource = VENDOR.get(ctx.pathParam("file"));
            if (resource == null) throw notFound(ctx);
            serve(ctx, resource, true);
        });
        routes.get("/console/<file>", ctx -> {
            String file = ctx.pathParam("file");
            if (!ASSET.matcher(file).matches()) throw notFound(ctx);
            serve(ctx, "console/" + file, false);
        });
    }

    private void serve(Context ctx, String resource, boolean immutable) {
        Asset asset = assets.get(resource);
        if (asset == null) {
            asset = load(resource).orElseThrow(() -> notFound(ctx));
            assets.put(resource, asset);
        }
        ctx.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Referrer-Policy", "no-referrer");
        ctx.header("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-cache");
        ctx.header("ETag", asset.etag());
        if (asset.etag().equals(ctx.header("If-None-Match"))) {
            ctx.status(304);
            return;
        }
        ctx.contentType(asset.contentType()).result(asset.bytes());
    }

    private static Optional<Asset> load(String resource) {
        try (InputStream in = ConsoleRoutes.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) return Optional.empty();
            byte[] bytes = in.readAllBytes();
            String extension = resource.substring(resource.lastIndexOf('.') + 1);
            String etag = "\"" + Sha256.hex(bytes, 0, bytes.length).substring(0, 32) + "\"";
            return Optional.of(new Asset(bytes, TYPES.getOrDefault(extension, "application/octet-stream"), etag));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the console's " + resource, e);
        }
    }

    private static StasisException notFound(Context ctx) {
        return new StasisException(ErrorCode.NOT_FOUND, "no console file " + ctx.path());
    }
}

package io.stasis.server.http;

import io.javalin.Javalin;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.json.JavalinJackson;
import io.javalin.security.Roles;
import io.javalin.security.RouteRole;
import io.javalin.websocket.WsHandlerType;
import io.stasis.blob.content.archive.BlobGc;
import io.stasis.core.audit.AuditEntry;
import io.stasis.core.auth.Caller;
import io.stasis.core.auth.TokenService;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.node.NodeDrain;
import io.stasis.core.node.NodeService;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.exec.ExecService;
import io.stasis.core.files.FileService;
import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.lifecycle.SandboxUsage;
import io.stasis.core.network.NetworkService;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.preview.PreviewService;
import io.stasis.core.process.ProcessService;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.secret.SecretService;
import io.stasis.core.template.TemplateBuilds;
import io.stasis.core.template.TemplateSandboxes;
import io.stasis.core.template.TemplateService;
import io.stasis.templates.oci.OciImports;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantService;
import io.stasis.core.spi.AuditLog;
import io.stasis.core.volume.VolumeService;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.auth.RequestRates;
import io.stasis.server.error.ErrorBody;
import io.stasis.server.error.ErrorMapper;
import io.stasis.server.e2b.E2bEndpoint;
import io.stasis.server.mcp.McpEndpoint;
import io.stasis.server.metrics.Metrics;
import io.stasis.server.preview.PreviewUrls;
import io.stasis.server.s3.S3Routes;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletMapping;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP face of the service: Javalin on Jetty with virtual threads, every route of the REST API,
 * authentication, error envelopes, request ids and request metrics; the MCP endpoint beside it.
 */
public final class HttpApi implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);
    private static final String START_ATTRIBUTE = "stasis.start";
    /** Set on a request whose error answer is written: the 404/405 handlers then leave it alone. */
    public static final String ERROR_WRITTEN = "stasis.errorWritten";
    /** The error code a request was answered, for its audit entry. */
    private static final String ERROR_CODE = "stasis.errorCode";
    /** The path parameters that name a call's resource, in the order they are looked for. */
    private static final List<String> RESOURCE_PARAMS = List.of("id", "cid", "vid", "tid", "kid", "name");

    /** Everything the routes call. */
    public record Services(SandboxService sandboxes, LifecycleService lifecycle, CheckpointService checkpoints, ExecService exec,
                           ProcessService processes, FileService files, TemplateService templates, TemplateBuilds templateBuilds,
                           TemplateSandboxes templateSandboxes, OciImports images, EventLog events,
                           ActivityTracker activity, BearerAuth auth, Metrics metrics,
                           PreviewService previews, NetworkService network,
                           SecretService secrets, TenantService tenants,
                           TokenService tokens, QuotaGuard quotas,
                           VolumeService volumes, SandboxBuckets buckets,
                           S3Routes s3, BlobGc blobGc, NodeService nodes, NodeDrain drain, SandboxUsage usage, RequestRates rates,
                           AuditLog audit) {
    }

    /**
     * Settings of the API itself ({@code defaultRuntime}: of a create that names none; {@code allowedRuntimes}: those a create may
     * name; {@code e2bUploads}: a host directory for the E2B endpoint's multipart uploads in progress).
     */
    public record Settings(String bind, int port, String defaultTemplate, Resources defaultResources, LifecyclePolicy defaultLifecycle,
                           long maxUploadBytes, long maxJsonBytes, PreviewUrls previewUrls, RuntimeKind defaultRuntime,
                           Set<RuntimeKind> allowedRuntimes, Path e2bUploads, boolean metricsPublic) {
    }

    private final Javalin app;
    private final String localUrl;
    private final McpEndpoint mcp;
    private final NodeForwarder forwarder;

    private static final int ACCEPT_QUEUE = 1024;
    /**
     * Longer than the keep-alive of the usual clients (the JDK's HttpClient, our SDK's, keeps an idle
     * connection 30 s; undici and httpx a few seconds): the client closes an idle connection first.
     * At Jetty's default (30 s) both ends closed together, and a request sent on the connection the
     * server was just closing got no answer at all ("header parser received no bytes").
     */
    private static final long IDLE_TIMEOUT_MS = 120_000;
    /** How much of a refused request's unread body is read so its answer arrives; a larger one loses the connection. */
    private static final long REFUSED_BODY_DRAIN = 8L << 20;

    private HttpApi(Javalin app, String localUrl, McpEndpoint mcp, NodeForwarder forwarder) {
        this.app = app;
        this.localUrl = localUrl;
        this.mcp = mcp;
        this.forwarder = forwarder;
    }

    public static HttpApi start(Settings settings, Services services) {
        // The MCP and E2B endpoints call this API; its port is known once it listens.
        var listening = new AtomicReference<String>();
        Supplier<String> self = () -> Objects.requireNonNull(listening.get(), "the API has not started");
        var mcp = new McpEndpoint(services.auth(), self);
        var e2b = new E2bEndpoint(self, settings.e2bUploads(), settings.maxUploadBytes());
        var forwarder = new NodeForwarder(services.nodes());
        Javalin app = Javalin.create(config -> {
            configure(config, settings, services, forwarder);
            // First, so that it wraps the endpoints' own filters (the MCP key check) too.
            config.jetty.modifyServletContextHandler(context ->
                    RefusedBodies.drainAfter(context, REFUSED_BODY_DRAIN, McpEndpoint.PATH, E2bEndpoint.MAPPING));
            config.jetty.modifyServletContextHandler(mcp::mount);
            config.jetty.modifyServletContextHandler(e2b::mount);
        });
        try {
            app.start();
        } catch (RuntimeException e) {
            mcp.close();
            forwarder.close();
            throw e;
        }
        listening.set(localUrl(settings.bind(), app.port()));
        return new HttpApi(app, listening.get(), mcp, forwarder);
    }

    public int port() {
        return app.port();
    }

    /** Where this API answers from this host: the bind address and port, the loopback for a wildcard bind. */
    public String localUrl() {
        return localUrl;
    }

    private static String localUrl(String bind, int port) {
        String host = switch (bind) {
            case "0.0.0.0", "" -> "127.0.0.1";
            case "::", "[::]" -> "[::1]";
            default -> bind.contains(":") && !bind.startsWith("[") ? "[" + bind + "]" : bind;
        };
        return "http://" + host + ":" + port;
    }

    private static void configure(JavalinConfig config, Settings settings, Services services, NodeForwarder forwarder) {
        config.startup.showJavalinBanner = false;
        config.startup.showOldJavalinVersionWarning = false;
        config.concurrency.useVirtualThreads = true;
        config.http.maxRequestSize = settings.maxJsonBytes();
        config.jsonMapper(new JavalinJackson(Json.MAPPER, true));
        config.router.ignoreTrailingSlashes = true;
        // Jetty's default accept queue (50) overflows when a few hundred clients connect at once
        // (a thousand stream followers): they would wait seconds for SYN retransmissions.
        // Requests Jetty refuses before any route (an undecodable or ambiguous URI, a header too large) get the envelope too.
        config.jetty.modifyServer(server -> server.setErrorHandler(new JettyErrors()));
        config.jetty.modifyServletContextHandler(context -> context.setErrorHandler(new JettyErrors()));
        config.jetty.addConnector((server, http) -> {
            // Header values as sent: Jetty's cache of common values would otherwise hand back
            // "charset=utf-8" for "charset=UTF-8", and an S3 client's signature covers the original.
            http.setHeaderCacheCaseSensitive(true);
            var connector = new ServerConnector(server, new HttpConnectionFactory(http));
            connector.setHost(settings.bind());
            connector.setPort(settings.port());
            connector.setAcceptQueueSize(ACCEPT_QUEUE);
            connector.setIdleTimeout(IDLE_TIMEOUT_MS);
            return connector;
        });

        var routes = config.routes;
        routes.before(ctx -> {
            ctx.attribute(START_ATTRIBUTE, System.nanoTime());
            RequestIds.assign(ctx);
        });
        var auth = services.auth();
        var guard = new AccessGuard(services.sandboxes(), services.checkpoints(), services.volumes());
        routes.before("/v1/*", ctx -> {
            services.nodes().requireLease(); // a node cut off from the catalog answers nothing: others may be taking its sandboxes
            if (OpenApiRoutes.isPublic(ctx)) return;
            auth.authenticate(ctx);
            services.rates().admit(BearerAuth.caller(ctx), ctx.method().name(), ctx.path());
        });
        routes.beforeMatched(guard::check);
        routes.beforeMatched(forwarder::forwardIfElsewhere); // a sandbox of another node: after the guard, so the caller is checked here
        routes.wsBeforeUpgrade("/v1/*", ctx -> {
            services.nodes().requireLease();
            services.auth().authenticateUpgrade(ctx);
            services.rates().admit(BearerAuth.caller(ctx), "GET", ctx.path());
            audit(services.audit(), ctx, 101); // the terminal's upgrade: its end is not a request the logger sees
        });
        routes.wsBeforeUpgrade(TerminalRoutes.PATH, ctx -> {
            guard.checkUpgrade(ctx, Access.EXEC);
            forwarder.markUpgradeIfElsewhere(ctx);
        });

        routes.get("/healthz", ctx -> ctx.json(new Views.Health("ok")));
        routes.get("/metrics", ctx -> {
            if (!settings.metricsPublic()) {
                auth.authenticate(ctx);
                if (!BearerAuth.caller(ctx).isRoot())
                    throw new StasisException(ErrorCode.FORBIDDEN, "the metrics are the operator's: send the root key "
                            + "(or start the service with --metrics-public)");
            }
            ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(services.metrics().scrape());
        });
        new SandboxRoutes(services.sandboxes(), services.checkpoints(), services.templateSandboxes(), settings.defaultTemplate(), settings.defaultResources(),
                settings.defaultLifecycle(), services.metrics(), services.volumes(), services.buckets(), settings.defaultRuntime(),
                settings.allowedRuntimes(), forwarder, services.nodes(), services.quotas()).register(routes);
        new VolumeRoutes(services.volumes(), services.lifecycle()).register(routes);
        services.s3().register(routes, forwarder);
        new LifecycleRoutes(services.sandboxes(), services.lifecycle(), services.checkpoints(), services.buckets()).register(routes);
        new CheckpointRoutes(services.checkpoints()).register(routes);
        new AuditRoutes(services.audit()).register(routes);
        new ExecRoutes(services.exec(), services.metrics()).register(routes);
        new ProcessRoutes(services.processes()).register(routes);
        new UsageRoutes(services.usage()).register(routes);
        new TerminalRoutes(services.processes(), forwarder).register(routes);
        new FileRoutes(services.files(), settings.maxUploadBytes()).register(routes);
        new TemplateRoutes(services.templates(), services.templateBuilds(), services.images(), settings.defaultResources()).register(routes);
        new NetworkRoutes(services.network()).register(routes);
        new SecretRoutes(services.secrets()).register(routes);
        new TenantRoutes(services.tenants(), services.quotas(), settings.allowedRuntimes()).register(routes);
        new TokenRoutes(services.tokens(), services.sandboxes(), services.volumes()).register(routes);
        new EventRoutes(services.events(), services.nodes().sharesCatalog()).register(routes);
        new PreviewRoutes(services.previews(), settings.previewUrls()).register(routes);
        new BlobRoutes(services.blobGc()).register(routes);
        new NodeRoutes(services.nodes(), services.drain(), forwarder).register(routes);
        new OpenApiRoutes().register(routes);
        new CallerRoutes().register(routes);
        new ConsoleRoutes().register(routes);

        routes.exception(StasisException.class, HttpApi::writeError);
        routes.exception(HttpResponseException.class, (e, ctx) -> writeError(fromHttp(e), ctx));
        routes.exception(Exception.class, (e, ctx) -> {
            log.atError().addKeyValue("requestId", RequestIds.of(ctx)).addKeyValue("method", ctx.method().name())
                    .addKeyValue("path", ctx.path()).setCause(e).log("unexpected error");
            writeError(new StasisException(ErrorCode.INTERNAL, "internal error; the log has the details under request id "
                    + RequestIds.of(ctx)), ctx);
        });
        routes.error(404, "*", ctx -> {
            if (ctx.attribute(ERROR_WRITTEN) == null)
                writeError(new StasisException(ErrorCode.NOT_FOUND, "no route " + ctx.method().name() + " " + ctx.path()), ctx);
        });
        routes.error(405, "*", ctx -> {
            if (ctx.attribute(ERROR_WRITTEN) == null)
                writeError(new StasisException(ErrorCode.NOT_FOUND, "no route " + ctx.method().name() + " " + ctx.path()), ctx);
        });

        config.requestLogger.http((ctx, ms) -> {
            Long start = ctx.attribute(START_ATTRIBUTE);
            long nanos = start == null ? 0 : System.nanoTime() - start;
            String route = ctx.endpoint() == null ? "unmatched" : ctx.endpoint().path;
            services.metrics().httpRequest(ctx.method().name(), route, ctx.statusCode(), nanos);
            if (ctx.path().startsWith("/v1/") && (BearerAuth.callerIf(ctx).isPresent() || ctx.statusCode() == 401))
                audit(services.audit(), ctx, ctx.statusCode());
            BearerAuth.callerIf(ctx).ifPresent(caller -> services.metrics().tenantRequest(caller.tenant().value(), ctx.statusCode()));
            var event = ctx.statusCode() >= 500 ? log.atWarn() : log.atDebug();
            event.addKeyValue("requestId", RequestIds.of(ctx)).addKeyValue("method", ctx.method().name())
                    .addKeyValue("path", ctx.path()).addKeyValue("status", ctx.statusCode())
                    .addKeyValue("ms", nanos / 1_000_000).addKeyValue("credential", BearerAuth.credentialId(ctx)).log("request");
        });
    }

    /** One audited call: who (the credential's id, never its secret), what, on which resource, how it ended. */
    private static void audit(AuditLog audit, Context ctx, int status) {
        var caller = BearerAuth.callerIf(ctx);
        // The route as matched, also when an error was answered before its handler (the guard's 404, under the error handler)
        var matched = ctx.endpoints().matchedHttpEndpoint();
        String route = matched != null ? matched.path : ctx.path();
        Map<String, String> params = ctx.endpoint() == null ? Map.of() : ctx.pathParamMap();
        Optional<String> resource = RESOURCE_PARAMS.stream().map(params::get).filter(Objects::nonNull).findFirst()
                .or(() -> params.values().stream().findFirst());
        String code = ctx.attribute(ERROR_CODE);
        audit.append(new AuditEntry.Call(Instant.now(), caller.map(Caller::tenant), caller.map(Caller::credentialId),
                caller.map(Caller::isRoot).orElse(false), ctx.method().name(), route, ctx.path(), resource, status,
                code != null ? code : status < 400 ? "ok" : "http_" + status, RequestIds.of(ctx)));
    }

    private static StasisException fromHttp(HttpResponseException e) {
        return new StasisException(codeFor(e.getStatus()), e.getMessage() == null ? "HTTP " + e.getStatus() : e.getMessage(), Map.of());
    }

    /** The API's code for an HTTP status that Javalin or Jetty chose. */
    static ErrorCode codeFor(int status) {
        return switch (status) {
            case 400 -> ErrorCode.MALFORMED_REQUEST;
            case 401 -> ErrorCode.UNAUTHENTICATED;
            case 403 -> ErrorCode.FORBIDDEN;
            case 404, 405 -> ErrorCode.NOT_FOUND;
            case 413 -> ErrorCode.PAYLOAD_TOO_LARGE;
            case 503 -> ErrorCode.HOST_BUSY;
            default -> status >= 500 ? ErrorCode.INTERNAL : ErrorCode.INVALID_REQUEST;
        };
    }

    private static void writeError(StasisException e, Context ctx) {
        int status = ErrorMapper.status(e.code());
        // A node gone or cut off, a host full: states of the service its message explains, not faults with a stack to read.
        boolean state = e.code() == ErrorCode.NODE_UNAVAILABLE || e.code() == ErrorCode.HOST_BUSY;
        if (status >= 500 && state)
            log.atWarn().addKeyValue("requestId", RequestIds.of(ctx)).addKeyValue("code", e.code().wireName())
                    .addKeyValue("details", e.details()).log(e.getMessage());
        else if (status >= 500)
            log.atError().addKeyValue("requestId", RequestIds.of(ctx)).addKeyValue("code", e.code().wireName())
                    .addKeyValue("details", e.details()).setCause(e).log(e.getMessage());
        RefusedBodies.drain(ctx, REFUSED_BODY_DRAIN);
        ctx.attribute(ERROR_WRITTEN, true);
        ctx.attribute(ERROR_CODE, e.code().wireName());
        if (e.details().get("retryAfterMs") instanceof Long waitMs) ctx.header("Retry-After", Long.toString(Math.ceilDiv(waitMs, 1000L)));
        ctx.status(status).json(ErrorBody.of(e));
    }

    /**
     * A route this API serves. WebSocket routes show as GET (the upgrade request); servlets mounted
     * beside Javalin's own show with method {@link #ANY_METHOD}, since they take every method.
     */
    public record Route(String method, String path, Set<RouteRole> roles) {
        public static final String ANY_METHOD = "*";
    }

    /** Every HTTP, WebSocket and servlet route registered, for the test that holds them against the OpenAPI spec. */
    public List<Route> routes() {
        var out = new ArrayList<Route>();
        for (var e : app.unsafe.internalRouter.allHttpHandlers())
            if (e.endpoint.method.isHttpMethod()) {
                var roles = e.endpoint.metadata(Roles.class);
                out.add(new Route(e.endpoint.method.name(), e.endpoint.path, roles == null ? Set.of() : roles.getRoles()));
            }
        for (var e : app.unsafe.internalRouter.allWsHandlers())
            if (e.getType() == WsHandlerType.WEBSOCKET) out.add(new Route("GET", e.getPath(), e.getRoles()));
        var context = app.jettyServer().server().getDescendant(ServletContextHandler.class);
        var mappings = context == null ? null : context.getServletHandler().getServletMappings();
        for (var mapping : mappings == null ? new ServletMapping[0] : mappings)
            for (String pathSpec : mapping.getPathSpecs())
                if (!pathSpec.equals("/*") && !pathSpec.equals("/")) out.add(new Route(Route.ANY_METHOD, pathSpec, Set.of())); // "/*" is Javalin's
        return out;
    }

    @Override
    public void close() {
        try {
            mcp.close();
        } finally {
            try {
                app.stop();
            } finally {
                forwarder.close();
            }
        }
    }
}

package io.stasis.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.template.BuildReport;
import io.stasis.core.template.BuildStep;
import io.stasis.core.template.Dockerfile;
import io.stasis.core.template.TemplateBuildRequest;
import io.stasis.core.template.TemplateBuilds;
import io.stasis.core.template.TemplateService;
import io.stasis.core.template.TemplateStatus;
import io.stasis.core.tenant.TenantId;
import io.stasis.json.PolicyJson;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.ListView;
import io.stasis.templates.oci.OciImports;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Templates: what sandboxes can be created from (the service's own and those the tenant built),
 * builds from steps or a Dockerfile, their progress and output, and deletion.
 */
final class TemplateRoutes {
    private static final int LOG_CHUNK = 64 * 1024;
    private static final String OCI_PREFIX = "oci://";
    private static final Duration FOLLOW_WAIT = Duration.ofSeconds(10);

    private final TemplateService templates;
    private final TemplateBuilds builds;
    private final OciImports images;
    private final Resources defaultResources;

    TemplateRoutes(TemplateService templates, TemplateBuilds builds, OciImports images, Resources defaultResources) {
        this.templates = templates;
        this.builds = builds;
        this.images = images;
        this.defaultResources = defaultResources;
    }

    /** A template, with its latest build when one ran since the service started. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record TemplateDetailView(String name, String description, String status, String version, Instant builtAt, Long sizeBytes,
                              Double progress, String message, String from, Map<String, String> env, String workdir, String user,
                              List<String> cmd, String startCmd, String readyCmd, BuildView build) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record BuildView(String status, String from, int step, int steps, int cachedSteps, Instant startedAt, Instant endedAt, FailureView failure) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record FailureView(int step, String instruction, Integer exitCode, String message, String output) {
    }

    record LogView(long start, String output, long next, boolean done) {
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/templates", ctx -> {
            var tenant = BearerAuth.caller(ctx).tenant();
            var views = new java.util.ArrayList<>(templates.list(tenant).stream().map(t -> view(tenant, t)).toList());
            for (var build : builds.of(tenant))
                if (views.stream().noneMatch(v -> v.name().equals(build.name()))) views.add(view(tenant, build.name()));
            ctx.json(new ListView<>(views, null));
        }, Access.TENANT);
        routes.post("/v1/templates", this::build, Access.TENANT);
        routes.post("/v1/templates/import", this::importArchive, Access.TENANT);
        routes.get("/v1/templates/{name}", ctx -> ctx.json(asResource(() -> view(BearerAuth.caller(ctx).tenant(), ctx.pathParam("name")))),
                Access.TENANT);
        routes.get("/v1/templates/{name}/versions", ctx -> ctx.json(new ListView<>(asResource(() -> builds.versions(
                BearerAuth.caller(ctx).tenant(), ctx.pathParam("name"))), null)), Access.TENANT);
        routes.get("/v1/templates/{name}/logs", ctx -> asResource(() -> {
            logs(ctx);
            return null;
        }), Access.TENANT);
        routes.delete("/v1/templates/{name}", ctx -> {
            asResource(() -> {
                builds.delete(BearerAuth.caller(ctx).tenant(), ctx.pathParam("name"));
                return null;
            });
            ctx.status(204);
        }, Access.TENANT);
    }

    /**
     * A template named in the path that the caller does not see is a 404 {@code not_found}; named in a
     * body (a create's {@code template}, a build's {@code from}) it stays a 422 {@code template_not_found}.
     */
    private static <T> T asResource(Supplier<T> lookup) {
        try {
            return lookup.get();
        } catch (StasisException e) {
            if (e.code() != ErrorCode.TEMPLATE_NOT_FOUND) throw e;
            throw new StasisException(ErrorCode.NOT_FOUND, e.getMessage(), e.details(), e);
        }
    }

    /** An image archive as the body (an OCI image layout or a docker-archive; plain, gzip or zstd): read now, applied in the background. */
    private void importArchive(Context ctx) throws java.io.IOException {
        var tenant = BearerAuth.caller(ctx).tenant();
        String name = Query.required(ctx, "name");
        builds.requireBuildable(tenant, name); // before the body is read
        try (var body = ctx.bodyInputStream()) {
            builds.startImport(tenant, name, "upload", images.upload(name, body));
        }
        ctx.status(202).json(view(tenant, name));
    }

    private void build(Context ctx) {
        var body = Json.body(ctx, Bodies.BuildTemplate.class);
        var tenant = BearerAuth.caller(ctx).tenant();
        if (body.from() != null && body.from().startsWith(OCI_PREFIX)) {
            if (body.steps() != null || body.dockerfile() != null || body.startCmd() != null || body.context() != null || body.cmd() != null)
                throw StasisException.invalid("from", "an image (oci://...) is imported as it is: import it under a name first, "
                        + "then build steps FROM that name");
            builds.startImport(tenant, body.name(), body.from(), images.pull(body.name(), body.from()));
            ctx.status(202).json(view(tenant, body.name()));
            return;
        }
        String from = body.from();
        List<BuildStep> steps;
        Optional<List<String>> cmd = Optional.ofNullable(body.cmd());
        if (body.dockerfile() != null) {
            if (body.from() != null || body.steps() != null || body.cmd() != null)
                throw StasisException.invalid("dockerfile", "names its own FROM, steps and CMD: give it without from, steps or cmd");
            var parsed = Dockerfile.parse(body.dockerfile(), name -> builds.environmentOf(tenant, name));
            from = parsed.from();
            steps = parsed.steps();
            cmd = parsed.cmd();
        } else {
            if (from == null) throw StasisException.invalid("from", "name the template to build on (e.g. base), or give a dockerfile");
            steps = BuildSteps.read(body.steps());
        }
        Optional<byte[]> context = Optional.ofNullable(body.context()).map(TemplateRoutes::decodeContext);
        var r = body.resources();
        var resources = r == null ? defaultResources : Resources.of(r.cpus(), r.memoryMb(), r.pids(), r.diskMb(), defaultResources);
        var request = new TemplateBuildRequest(body.name(), from, steps, cmd, context, resources,
                body.network() == null ? Optional.empty() : Optional.of(PolicyJson.readNetwork(body.network(), "network")), tenant,
                preboot(body));
        builds.start(request);
        ctx.status(202).json(view(tenant, request.name()));
    }

    private static Optional<TemplateBuildRequest.Preboot> preboot(Bodies.BuildTemplate body) {
        if (body.startCmd() == null) {
            if (body.readyCmd() != null || body.readyTimeoutMs() != null)
                throw StasisException.invalid("startCmd", "readyCmd and readyTimeoutMs go with a startCmd");
            return Optional.empty();
        }
        if (body.readyCmd() == null) throw StasisException.invalid("readyCmd", "a startCmd needs a readyCmd: the command that exits 0 once it is ready");
        if (body.readyTimeoutMs() != null && body.readyTimeoutMs() <= 0) throw StasisException.invalid("readyTimeoutMs", "must be positive");
        return Optional.of(new TemplateBuildRequest.Preboot(body.startCmd(), body.readyCmd(), body.readyTimeoutMs() == null
                ? TemplateBuildRequest.Preboot.DEFAULT_READY_TIMEOUT : Duration.ofMillis(body.readyTimeoutMs())));
    }

    private static byte[] decodeContext(String base64) {
        try {
            return Base64.getDecoder().decode(base64.replaceAll("\\s", ""));
        } catch (IllegalArgumentException e) {
            throw StasisException.invalid("context", "must be a tar archive (plain or gzip) in base64: " + e.getMessage());
        }
    }

    /**
     * The build's output from {@code offset}: JSON ({@code follow=true} waits up to 10 s for more),
     * or, asked with {@code Accept: text/event-stream}, {@code output} events until the build ends.
     */
    private void logs(Context ctx) {
        var tenant = BearerAuth.caller(ctx).tenant();
        String name = ctx.pathParam("name");
        var build = builds.latest(tenant, name).orElseThrow(() -> {
            templates.status(tenant, name); // template_not_found if it does not exist at all
            return new StasisException(ErrorCode.NOT_FOUND, "template '" + name + "' has had no build since the service started",
                    Map.of("template", name));
        });
        long offset = Query.integer(ctx, "offset", 0);
        if (offset < 0) throw StasisException.invalid("offset", "must not be negative");
        if (SseStream.wanted(ctx)) {
            try (var sse = SseStream.open(ctx)) {
                long at = offset;
                while (!sse.clientGone()) {
                    var slice = build.log().await(at, LOG_CHUNK, FOLLOW_WAIT);
                    if (slice.data().length > 0) sse.event("output", Long.toString(slice.next()), logView(slice));
                    at = slice.next();
                    if (slice.done()) {
                        sse.event("end", view(tenant, name));
                        break;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            var slice = Query.bool(ctx, "follow", false) ? build.log().await(offset, LOG_CHUNK, FOLLOW_WAIT) : build.log().read(offset, LOG_CHUNK);
            ctx.json(logView(slice));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static LogView logView(io.stasis.core.template.BuildLog.Slice slice) {
        return new LogView(slice.start(), new String(slice.data(), StandardCharsets.UTF_8), slice.next(), slice.done());
    }

    private TemplateDetailView view(TenantId tenant, String name) {
        return view(tenant, templates.statusOrBuilding(tenant, name, builds.latest(tenant, name).isPresent()));
    }

    private TemplateDetailView view(TenantId tenant, TemplateStatus t) {
        var build = builds.latest(tenant, t.name());
        String status = build.filter(TemplateBuilds.Build::running).map(b -> "building")
                .or(() -> build.filter(b -> b.report().failure().isPresent()).map(b -> "failed")).orElse(t.status());
        var config = t.config();
        return new TemplateDetailView(t.name(), t.description(), status, t.version().orElse(null), t.builtAt().orElse(null),
                t.sizeBytes().orElse(null), t.progress().orElse(null), t.message().orElse(null),
                config.flatMap(c -> c.from()).orElse(null), config.map(c -> c.env()).filter(e -> !e.isEmpty()).orElse(null),
                config.flatMap(c -> c.workdir()).orElse(null), config.flatMap(c -> c.user()).orElse(null),
                config.flatMap(c -> c.cmd()).orElse(null),
                config.flatMap(c -> c.preboot()).map(p -> p.startCmd()).orElse(null),
                config.flatMap(c -> c.preboot()).map(p -> p.readyCmd()).orElse(null),
                build.map(b -> buildView(b.running(), b.report())).orElse(null));
    }

    private static BuildView buildView(boolean running, BuildReport r) {
        String status = running ? "building" : r.failure().isPresent() ? "failed" : "ready";
        return new BuildView(status, r.from(), r.step(), r.steps(), r.cachedSteps(), r.startedAt(), r.endedAt().orElse(null),
                r.failure().map(f -> new FailureView(f.step(), f.instruction(), f.exitCode().orElse(null), f.message(), f.output())).orElse(null));
    }
}

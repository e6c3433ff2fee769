package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.json.PolicyJson;
import io.stasis.core.bucket.BucketMountRequest;
import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.node.NodeService;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.EnvVars;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.template.TemplateSandboxes;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeMount;
import io.stasis.core.volume.VolumeService;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.ListView;
import io.stasis.server.http.Views.SandboxView;
import io.stasis.server.metrics.Metrics;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/** Create, list, get and delete sandboxes. */
final class SandboxRoutes {
    private static final String METADATA_PREFIX = "metadata.";

    private final SandboxService sandboxes;
    private final String defaultTemplate;
    private final Resources defaultResources;
    private final LifecyclePolicy defaultLifecycle;
    private final Metrics metrics;
    private final VolumeService volumes;
    private final CheckpointService checkpoints;
    private final SandboxBuckets buckets;
    private final RuntimeKind defaultRuntime;
    private final QuotaGuard quotas;
    private final Set<RuntimeKind> allowedRuntimes;
    private final TemplateSandboxes templateSandboxes;
    private final NodeForwarder forwarder;
    private final NodeService nodes;

    SandboxRoutes(SandboxService sandboxes, CheckpointService checkpoints, TemplateSandboxes templateSandboxes, String defaultTemplate,
                  Resources defaultResources, LifecyclePolicy defaultLifecycle, Metrics metrics,
                  VolumeService volumes, SandboxBuckets buckets, RuntimeKind defaultRuntime, Set<RuntimeKind> allowedRuntimes,
                  NodeForwarder forwarder, NodeService nodes, QuotaGuard quotas) {
        this.quotas = quotas;
        this.forwarder = forwarder;
        this.nodes = nodes;
        this.defaultRuntime = defaultRuntime;
        this.templateSandboxes = templateSandboxes;
        this.allowedRuntimes = Set.copyOf(allowedRuntimes);
        this.volumes = volumes;
        this.buckets = buckets;
        this.checkpoints = checkpoints;
        this.sandboxes = sandboxes;
        this.defaultTemplate = defaultTemplate;
        this.defaultResources = defaultResources;
        this.defaultLifecycle = defaultLifecycle;
        this.metrics = metrics;
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/sandboxes", this::create, Access.TENANT);
        routes.get("/v1/sandboxes", this::list, Access.TENANT);
        routes.get("/v1/sandboxes/{id}", ctx -> {
            var id = AccessGuard.sandboxId(ctx);
            var view = withMounts(sandboxes.get(id));
            // A sandbox of a node whose lease lapsed is read here (NodeForwarder): lost, once it is past its grace.
            ctx.json(NodeForwarder.lapsedNode(ctx).flatMap(nodes::lostReason).map(view::lost).orElse(view));
        }, Access.SANDBOX_READ);
        routes.delete("/v1/sandboxes/{id}", ctx -> {
            sandboxes.delete(AccessGuard.sandboxId(ctx));
            ctx.status(204);
        }, Access.SANDBOX_DELETE);
    }

    private void create(Context ctx) throws IOException, InterruptedException {
        var body = Json.body(ctx, Bodies.CreateSandbox.class);
        if (body.fromCheckpoint() != null) {
            createFrom(ctx, body);
            return;
        }
        var r = body.resources();
        var resources = r == null ? defaultResources : Resources.of(r.cpus(), r.memoryMb(), r.pids(), r.diskMb(), defaultResources);
        var tenant = BearerAuth.caller(ctx).tenant();
        var volumeMounts = body.volumes() == null ? List.<VolumeMount>of() : volumes.resolveMounts(tenant,
                body.volumes().stream().map(m -> new VolumeService.MountRequest(m.volume(), m.path(),
                        Boolean.TRUE.equals(m.readOnly()))).toList());
        var bucketMounts = body.mounts() == null ? List.<SandboxBucket>of() : buckets.resolve(tenant,
                body.mounts().stream().map(m -> m == null ? null : new BucketMountRequest(m.type(), m.endpoint(), m.region(),
                        m.bucket(), m.prefix(), m.path(), m.readOnly(), m.credentialsSecret())).toList(), volumeMounts);
        var spec = new SandboxSpec(
                Objects.requireNonNullElse(body.template(), defaultTemplate),
                Optional.ofNullable(body.name()),
                EnvVars.validateEnv("env", orEmpty(body.env())),
                EnvVars.validateMetadata(orEmpty(body.metadata())),
                resources,
                PolicyJson.mergeDurability(PolicyJson.mergeLifecycle(defaultLifecycle, body.lifecycle()), body.durability()),
                body.network() == null ? Optional.empty() : Optional.of(PolicyJson.readNetwork(body.network(), "network")),
                tenant,
                volumeMounts,
                bucketMounts,
                runtimeOf(body.runtime(), tenant));
        // Where the sandbox is made: with its volumes, whose files are on their node's disk; else on the node with most room.
        var demand = SandboxService.demandOfNew(resources, bucketMounts.size());
        if (volumeMounts.isEmpty() ? forwarder.placeCreate(ctx, demand) : forwarder.passIfVolumeElsewhere(ctx, volumeMounts.getFirst().volume()))
            return;
        long start = System.nanoTime();
        Sandbox sandbox;
        try {
            sandbox = templateSandboxes.create(spec);
        } catch (StasisException e) {
            // Another create took this node's last room between this one's placement and its admission: placed again, once.
            if (volumeMounts.isEmpty() && forwarder.placeAgainIfFull(ctx, e, demand)) return;
            throw e;
        }
        metrics.sandboxCreated(spec.template(), System.nanoTime() - start);
        ctx.status(201).json(SandboxView.of(sandbox, spec.buckets(), i -> 0));
    }

    /**
     * From a checkpoint, this instance's or a durable one of any instance sharing the blob store:
     * the checkpoint decides template, resources, env, metadata, lifecycle and network; only a
     * name may be given with it.
     */
    private void createFrom(Context ctx, Bodies.CreateSandbox body) throws IOException, InterruptedException {
        if (body.template() != null || body.env() != null || body.metadata() != null || body.resources() != null || body.lifecycle() != null
                || body.durability() != null
                || body.network() != null || body.volumes() != null || body.mounts() != null || body.runtime() != null)
            throw StasisException.invalid("fromCheckpoint", "takes the sandbox's settings from the checkpoint: give only name with it");
        String raw = body.fromCheckpoint();
        if (!CheckpointId.isValid(raw)) throw CheckpointService.notFound(raw);
        if (forwarder.leaveIfDraining(ctx)) return;
        long start = System.nanoTime();
        var sandbox = checkpoints.createFrom(BearerAuth.caller(ctx).tenant(), new CheckpointId(raw),
                Optional.ofNullable(body.name()));
        metrics.sandboxCreated(sandbox.template(), System.nanoTime() - start);
        ctx.status(201).json(withMounts(sandbox));
    }

    /**
     * The runtime a create asks for, or the default (the tenant's, if it is held to others);
     * {@code invalid_request} for one this service does not allow.
     */
    private RuntimeKind runtimeOf(String asked, TenantId tenant) {
        var kind = asked == null ? quotas.runtimeFor(tenant, defaultRuntime) : RuntimeKind.parse("runtime", asked);
        if (!allowedRuntimes.contains(kind))
            throw StasisException.invalid("runtime", kind + " is not allowed on this service; allowed: "
                    + String.join(", ", RuntimeKind.wireNames(allowedRuntimes)));
        return kind;
    }

    private SandboxView withMounts(Sandbox sandbox) {
        return SandboxView.of(sandbox, buckets).withDurableImage(checkpoints.durableImage(sandbox.id()));
    }

    private void list(Context ctx) {
        var metadata = new LinkedHashMap<String, String>();
        ctx.queryParamMap().forEach((key, values) -> {
            if (key.startsWith(METADATA_PREFIX) && !values.isEmpty()) metadata.put(key.substring(METADATA_PREFIX.length()), values.getLast());
        });
        var query = new SandboxQuery(Query.string(ctx, "state"), metadata, Query.string(ctx, "cursor"),
                Query.integer(ctx, "limit", SandboxQuery.DEFAULT_LIMIT), Optional.of(BearerAuth.caller(ctx).tenant()));
        var page = sandboxes.list(query);
        var lost = nodes.lostSandboxes();
        ctx.json(new ListView<>(page.items().stream().map(s -> lost.containsKey(s.id()) ? SandboxView.of(s).lost(lost.get(s.id())) : SandboxView.of(s))
                .toList(), page.nextCursor().orElse(null)));
    }

    private static Map<String, String> orEmpty(Map<String, String> map) {
        return map == null ? Map.of() : map;
    }
}

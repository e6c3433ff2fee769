package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeService;
import io.stasis.core.volume.VolumeSnapshot;
import io.stasis.core.volume.VolumeSync;
import io.stasis.core.volume.VolumeSyncId;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.ListView;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Volumes: create, list, get, delete; their snapshots and syncs. */
final class VolumeRoutes {
    private final VolumeService volumes;
    private final LifecycleService lifecycle;

    VolumeRoutes(VolumeService volumes, LifecycleService lifecycle) {
        this.volumes = volumes;
        this.lifecycle = lifecycle;
    }

    record MountView(String sandboxId, String path, boolean readOnly) {
    }

    record VolumeView(String id, String name, long sizeMb, Instant createdAt, String origin, List<MountView> mountedBy) {
    }

    record SnapshotView(String id, String volumeId, Instant createdAt) {
        static SnapshotView of(VolumeSnapshot s) {
            return new SnapshotView(s.id().value(), s.volume().value(), s.createdAt());
        }
    }

    record SyncView(String id, String volumeId, String parentId, int streams, long streamBytes, Instant createdAt) {
        static SyncView of(VolumeSync s) {
            return new SyncView(s.id().value(), s.volume().value(), s.parent().map(VolumeSyncId::value).orElse(null), s.streams().size(),
                    s.streamBytes(), s.createdAt());
        }
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/volumes", this::create, Access.TENANT);
        routes.get("/v1/volumes", ctx -> ctx.json(new ListView<>(volumes.list(BearerAuth.caller(ctx).tenant()).stream().map(this::view).toList(),
                null)), Access.TENANT);
        routes.get("/v1/volumes/{vid}", ctx -> ctx.json(view(volume(ctx))), Access.VOLUME_READ);
        routes.delete("/v1/volumes/{vid}", ctx -> {
            boolean force = Query.bool(ctx, "force", false);
            volumes.delete(BearerAuth.caller(ctx).tenant(), AccessGuard.volumeId(ctx), force,
                    sandbox -> lifecycle.stop(sandbox, LifecycleService.Reason.API));
            ctx.status(204);
        }, Access.VOLUME_WRITE);
        routes.post("/v1/volumes/{vid}/snapshots", ctx -> ctx.status(201).json(SnapshotView.of(
                volumes.snapshot(BearerAuth.caller(ctx).tenant(), AccessGuard.volumeId(ctx)))), Access.VOLUME_WRITE);
        routes.get("/v1/volumes/{vid}/snapshots", ctx -> ctx.json(new ListView<>(volumes.snapshots(BearerAuth.caller(ctx).tenant(),
                AccessGuard.volumeId(ctx)).stream().map(SnapshotView::of).toList(), null)), Access.VOLUME_READ);
        routes.get("/v1/volumes/{vid}/snapshots/{sid}", ctx -> ctx.json(SnapshotView.of(volumes.snapshot(BearerAuth.caller(ctx).tenant(),
                AccessGuard.volumeId(ctx), ctx.pathParam("sid")))), Access.VOLUME_READ);
        routes.delete("/v1/volumes/{vid}/snapshots/{sid}", ctx -> {
            volumes.deleteSnapshot(BearerAuth.caller(ctx).tenant(), AccessGuard.volumeId(ctx), ctx.pathParam("sid"));
            ctx.status(204);
        }, Access.VOLUME_WRITE);
        routes.post("/v1/volumes/{vid}/sync", ctx -> ctx.json(SyncView.of(volumes.sync(BearerAuth.caller(ctx).tenant(), AccessGuard.volumeId(ctx)))),
                Access.VOLUME_WRITE);
        routes.get("/v1/volumes/{vid}/syncs", ctx -> ctx.json(new ListView<>(volumes.syncs(BearerAuth.caller(ctx).tenant(),
                AccessGuard.volumeId(ctx)).stream().map(SyncView::of).toList(), null)), Access.VOLUME_READ);
        routes.delete("/v1/volumes/{vid}/syncs/{sync}", ctx -> {
            volumes.deleteSync(BearerAuth.caller(ctx).tenant(), AccessGuard.volumeId(ctx), ctx.pathParam("sync"));
            ctx.status(204);
        }, Access.VOLUME_WRITE);
    }

    private Volume volume(Context ctx) {
        return volumes.get(BearerAuth.caller(ctx).tenant(), AccessGuard.volumeId(ctx));
    }

    private VolumeView view(Volume v) {
        var mounts = volumes.mounters(v.id()).stream().map(m -> new MountView(m.sandbox().value(), m.path(), m.readOnly())).toList();
        return new VolumeView(v.id().value(), v.name(), v.sizeMb(), v.createdAt(), v.origin().orElse(null), mounts);
    }

    private void create(Context ctx) {
        var body = Json.body(ctx, Bodies.CreateVolume.class);
        if (body.sizeMb() != null && body.sizeGb() != null) throw StasisException.invalid("sizeGb", "give sizeMb or sizeGb, not both");
        if (body.fromSnapshot() != null && body.fromSync() != null) throw StasisException.invalid("fromSync", "give fromSnapshot or fromSync, not both");
        if (body.sizeGb() != null && (body.sizeGb() <= 0 || body.sizeGb() > (1L << 20)))
            throw StasisException.invalid("sizeGb", "must be positive, was " + body.sizeGb());
        Optional<Long> sizeMb = Optional.ofNullable(body.sizeMb()).or(() -> Optional.ofNullable(body.sizeGb()).map(gb -> gb * 1024));
        VolumeService.Source source = body.fromSnapshot() != null ? new VolumeService.Source.FromSnapshot(body.fromSnapshot())
                : body.fromSync() != null ? new VolumeService.Source.FromSync(body.fromSync())
                : new VolumeService.Source.Empty();
        var volume = volumes.create(BearerAuth.caller(ctx).tenant(), body.name(), sizeMb, source);
        ctx.status(201).json(view(volume));
    }
}

package io.stasis.sdk;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;

/**
 * The tenant's volumes, from {@link StasisClient#volumes()}: directory trees with a size that
 * outlive sandboxes. Any number of sandboxes may mount one, read-write or read-only
 * ({@link CreateSandboxRequest.Builder#volume}); they share its files with no coordination added
 * (last writer wins).
 *
 * <pre>{@code
 * var data = client.volumes().create("data", 2048);
 * var s = client.sandboxes().create(CreateSandboxRequest.builder().template("base").volume("data", "/data").build());
 * var snap = client.volumes().snapshot("data");
 * var sync = client.volumes().sync("data");             // durable in the blob store when it returns
 * client.volumes().createFromSync("data-copy", sync.id()); // on any instance sharing the blob store
 * }</pre>
 */
public final class Volumes {
    private final HttpTransport transport;

    Volumes(HttpTransport transport) {
        this.transport = transport;
    }

    /** Creates an empty volume of {@code sizeMb} MiB. @throws ConflictException {@code name_taken} */
    public VolumeInfo create(String name, long sizeMb) {
        var body = new LinkedHashMap<String, Object>();
        body.put("name", Objects.requireNonNull(name, "name"));
        body.put("sizeMb", sizeMb);
        return post(body);
    }

    /** Creates a volume holding what a snapshot of one of the tenant's volumes holds (O(1)). */
    public VolumeInfo createFromSnapshot(String name, String snapshotId) {
        var body = new LinkedHashMap<String, Object>();
        body.put("name", Objects.requireNonNull(name, "name"));
        body.put("fromSnapshot", Objects.requireNonNull(snapshotId, "snapshotId"));
        return post(body);
    }

    /** Restores a sync (or a volume id's newest sync) from the blob store as a new volume. */
    public VolumeInfo createFromSync(String name, String syncOrVolumeId) {
        var body = new LinkedHashMap<String, Object>();
        body.put("name", Objects.requireNonNull(name, "name"));
        body.put("fromSync", Objects.requireNonNull(syncOrVolumeId, "syncOrVolumeId"));
        return post(body);
    }

    private VolumeInfo post(Object body) {
        return transport.json(transport.jsonCall("POST", "/v1/volumes", body), VolumeInfo.class);
    }

    public List<VolumeInfo> list() {
        Page.Body<VolumeInfo> body = transport.page(transport.call("GET", "/v1/volumes"), VolumeInfo.class);
        return body.items() == null ? List.of() : List.copyOf(body.items());
    }

    /** @throws NotFoundException {@code volume_not_found} */
    public VolumeInfo get(String idOrName) {
        return transport.json(transport.call("GET", "/v1/volumes/" + Query.encode(idOrName)), VolumeInfo.class);
    }

    /** Deletes a volume; with {@code force}, sandboxes mounting it are stopped and lose the mount. @throws ConflictException while mounted */
    public void delete(String idOrName, boolean force) {
        transport.discard(transport.call("DELETE", "/v1/volumes/" + Query.encode(idOrName) + (force ? "?force=true" : "")));
    }

    public VolumeSnapshotInfo snapshot(String idOrName) {
        return transport.json(transport.call("POST", "/v1/volumes/" + Query.encode(idOrName) + "/snapshots"), VolumeSnapshotInfo.class);
    }

    public List<VolumeSnapshotInfo> snapshots(String idOrName) {
        Page.Body<VolumeSnapshotInfo> body = transport.page(transport.call("GET", "/v1/volumes/" + Query.encode(idOrName) + "/snapshots"),
                VolumeSnapshotInfo.class);
        return body.items() == null ? List.of() : List.copyOf(body.items());
    }

    public void deleteSnapshot(String idOrName, String snapshotId) {
        transport.discard(transport.call("DELETE", "/v1/volumes/" + Query.encode(idOrName) + "/snapshots/" + Query.encode(snapshotId)));
    }

    /**
     * Deletes one of the volume's syncs from the blob store (later syncs stay restorable); the
     * store's garbage collection then frees what only it held.
     */
    public void deleteSync(String idOrName, String syncId) {
        transport.discard(transport.call("DELETE", "/v1/volumes/" + Query.encode(idOrName) + "/syncs/" + Query.encode(syncId)));
    }

    /** Returns once the volume's current content is durable in the blob store (incremental to the previous sync). */
    public VolumeSyncInfo sync(String idOrName) {
        return transport.json(transport.call("POST", "/v1/volumes/" + Query.encode(idOrName) + "/sync").timeout(transport.operationTimeout()), VolumeSyncInfo.class);
    }
}

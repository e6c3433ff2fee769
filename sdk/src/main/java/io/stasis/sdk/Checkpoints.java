package io.stasis.sdk;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Checkpoints by id, from {@link StasisClient#checkpoints()}. A sandbox's own list is
 * {@link Sandbox#checkpoints()}.
 *
 * <pre>{@code
 * Checkpoint c = client.checkpoints().get("ckpt_...");
 * client.checkpoints().delete(c.id());
 * }</pre>
 */
public final class Checkpoints {
    private final HttpTransport transport;

    Checkpoints(HttpTransport transport) {
        this.transport = transport;
    }

    /** Every checkpoint of the caller's tenant on this instance, oldest first, with its upload state. */
    public List<Checkpoint> list() {
        return list("/v1/checkpoints");
    }

    /**
     * The tenant's durable checkpoints in the server's blob store, written by any server sharing it
     * (hibernations and those of deleted sandboxes included): what
     * {@link CreateSandboxRequest#fromCheckpoint} can restore on this server.
     */
    public List<Checkpoint> listInStore() {
        return list("/v1/checkpoints?source=store");
    }

    private List<Checkpoint> list(String path) {
        Page.Body<CheckpointInfo> body = transport.json(transport.call("GET", path),
                Wire.MAPPER.getTypeFactory().constructParametricType(Page.Body.class, CheckpointInfo.class));
        if (body.items() == null) return List.of();
        return body.items().stream().map(info -> new Checkpoint(info, transport)).toList();
    }

    /**
     * Waits, at most {@code timeout} (up to 1 h), until the checkpoint is in the blob store; returns it as it
     * then is: check {@link Checkpoint#durable()} (false if the time ran out).
     *
     * @throws NotFoundException {@code checkpoint_not_found}
     * @throws ServerErrorException the upload failed
     */
    public Checkpoint sync(String checkpointId, Duration timeout) {
        var call = transport.call("POST", path(checkpointId) + "/sync?timeout=" + ApiDurations.format(timeout))
                .timeout(timeout.plusSeconds(30));
        return new Checkpoint(transport.json(call, CheckpointInfo.class), transport);
    }

    /** @throws NotFoundException {@code checkpoint_not_found} */
    public Checkpoint get(String checkpointId) {
        return new Checkpoint(transport.json(transport.call("GET", path(checkpointId)), CheckpointInfo.class), transport);
    }

    /**
     * Deletes a checkpoint; sandboxes forked from it keep their roots.
     *
     * @throws NotFoundException {@code checkpoint_not_found}
     */
    public void delete(String checkpointId) {
        delete(transport, checkpointId);
    }

    /**
     * Keeps {@code count} forks of a memory checkpoint restored ahead (see {@link Checkpoint#keepSpares}).
     *
     * @throws NotFoundException {@code checkpoint_not_found}
     * @throws InvalidRequestException a files checkpoint, or more than the server keeps
     */
    public Checkpoint keepSpares(String checkpointId, int count) {
        return keepSpares(transport, checkpointId, count);
    }

    static Checkpoint keepSpares(HttpTransport transport, String checkpointId, int count) {
        var info = transport.json(transport.jsonCall("PUT", path(checkpointId) + "/spares", Map.of("count", count)), CheckpointInfo.class);
        return new Checkpoint(info, transport);
    }

    static void delete(HttpTransport transport, String checkpointId) {
        transport.discard(transport.call("DELETE", path(checkpointId)));
    }

    private static String path(String checkpointId) {
        if (checkpointId == null || checkpointId.isBlank()) throw new IllegalArgumentException("checkpoint id is empty");
        return "/v1/checkpoints/" + Query.encode(checkpointId);
    }
}

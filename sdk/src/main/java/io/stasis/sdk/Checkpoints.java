package io.stasis.sdk;

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

    static void delete(HttpTransport transport, String checkpointId) {
        transport.discard(transport.call("DELETE", path(checkpointId)));
    }

    private static String path(String checkpointId) {
        if (checkpointId == null || checkpointId.isBlank()) throw new IllegalArgumentException("checkpoint id is empty");
        return "/v1/checkpoints/" + Query.encode(checkpointId);
    }
}

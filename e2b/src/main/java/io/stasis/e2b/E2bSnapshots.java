package io.stasis.e2b;

import io.stasis.sdk.CheckpointInfo;
import io.stasis.sdk.CheckpointRequest;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.StasisClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * E2B's snapshots as Stasis's checkpoints with memory: taken by name, kept in the blob store (so
 * they outlive their sandbox), listed, deleted, and restored by a create that names one.
 */
final class E2bSnapshots {
    private E2bSnapshots() {
    }

    /** Takes a snapshot of the sandbox: a named checkpoint with memory. */
    static Map<String, Object> take(StasisClient client, String sandbox, String name) {
        var checkpoint = client.sandboxes().checkpoint(sandbox, CheckpointRequest.builder().name(name).memory(true).build());
        return view(checkpoint.info());
    }

    /** The tenant's snapshots (its checkpoints with memory taken by a caller), here and in the blob store. */
    static List<Map<String, Object>> list(StasisClient client, String sandbox, String name) {
        var seen = new LinkedHashMap<String, CheckpointInfo>();
        for (var checkpoint : client.checkpoints().list()) seen.put(checkpoint.id(), checkpoint.info());
        for (var checkpoint : client.checkpoints().listInStore()) seen.putIfAbsent(checkpoint.id(), checkpoint.info());
        return seen.values().stream().filter(c -> c.memory() && "user".equals(c.purpose()))
                .filter(c -> sandbox == null || sandbox.equals(c.sandboxId()))
                .filter(c -> name == null || name.equals(c.name()) || name.equals(c.id()))
                .map(E2bSnapshots::view).toList();
    }

    /** Deletes a snapshot ({@code DELETE /templates/{id}}); false if there is none of that id. */
    static boolean delete(StasisClient client, String id) {
        try {
            client.checkpoints().delete(id);
            return true;
        } catch (NotFoundException e) {
            return false;
        }
    }

    /** The id of the newest snapshot named {@code name}, if any. */
    static Optional<String> named(StasisClient client, String name) {
        return list(client, null, name).stream().map(s -> (String) s.get("snapshotID")).reduce((older, newer) -> newer);
    }

    private static Map<String, Object> view(CheckpointInfo checkpoint) {
        return Map.of("snapshotID", checkpoint.id(), "names", checkpoint.name() == null ? List.of() : List.of(checkpoint.name()));
    }
}

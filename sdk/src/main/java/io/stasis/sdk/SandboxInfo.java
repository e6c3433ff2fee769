package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The sandbox object as the API returns it. {@link Sandbox} wraps it with methods.
 *
 * @param id           {@code sbx_...}
 * @param name         the unique name, or null
 * @param template     the template it was created from
 * @param state        {@code running}, {@code paused}, {@code standby}, {@code hibernated} or {@code stopped} (later
 *                     server versions may add states)
 * @param stateReason  why it stopped ({@code api}, {@code idle}, {@code processes_lost}, ...), or null
 * @param hibernation  when hibernated, its process image; else null
 * @param createdAt    creation time
 * @param resources    its limits
 * @param env          environment added to every command
 * @param metadata     the caller's labels
 * @param parentId     the sandbox it was forked from, or null
 * @param checkpointId the checkpoint it was forked from, or null
 * @param lifecycle    its idle policy (null only from a server that predates it)
 * @param generation   how many times its live state has changed (1 when made; 0 from a server that
 *                     predates generations): every state change and every checkpoint adds one, and it
 *                     never goes down; pass it to {@link Sandbox#resume(long)} to refuse an older state
 * @param durableImage its newest durable checkpoint and its digest, in the answers of get and resume
 *                     (null elsewhere, and when none of its checkpoints is durable)
 * @param mounts       its bucket mounts, in the answers of create and get (empty elsewhere)
 * @param runtime      what runs it: {@code runc} (containers on the host kernel) or {@code gvisor}
 *                     (gVisor's user-space kernel in between); its forks keep it (null from a server
 *                     that predates the choice: runc)
 * @param durability   how it is kept restorable while it runs: {@code checkpointEvery} (e.g. {@code "5m"}, or
 *                     null for never), as set at create or by the server's default (empty from a server that
 *                     predates it)
 */
public record SandboxInfo(String id, String name, String template, String state, String stateReason,
                          Hibernation hibernation, Instant createdAt, Resources resources, Map<String, String> env,
                          Map<String, String> metadata, String parentId, String checkpointId,
                          LifecyclePolicy lifecycle, long generation,
                          @com.fasterxml.jackson.annotation.JsonInclude(JsonInclude.Include.NON_NULL)
                          DurableImage durableImage,
                          @com.fasterxml.jackson.annotation.JsonInclude(JsonInclude.Include.NON_EMPTY)
                          List<BucketMount> mounts,
                          @com.fasterxml.jackson.annotation.JsonInclude(JsonInclude.Include.NON_NULL)
                          String runtime,
                          @com.fasterxml.jackson.annotation.JsonInclude(JsonInclude.Include.NON_EMPTY)
                          Map<String, String> durability) {
    public SandboxInfo {
        mounts = mounts == null ? List.of() : List.copyOf(mounts);
        durability = copy(durability);
        env = copy(env);
        metadata = copy(metadata);
    }

    static Map<String, String> copy(Map<String, String> map) {
        return map == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }
}

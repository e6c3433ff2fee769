package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The body of {@code POST /v1/sandboxes}. Every field is optional; unset fields take the
 * server's defaults (template {@code base}, 1 CPU, 1024 MiB, 512 pids, a 10 GiB disk, the server's idle policy
 * and network policy) and are not sent.
 *
 * <pre>{@code
 * Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder()
 *         .template("tiny")
 *         .name("my-agent")
 *         .env("FOO", "bar")
 *         .metadata("team", "x")
 *         .cpus(0.5).memoryMb(256).pids(128).diskMb(2048)
 *         .lifecycle(LifecycleUpdate.builder().hibernateAfterIdle(Duration.ofMinutes(1)).build())
 *         .network(NetworkPolicy.builder().denyByDefault().allow("pypi.org", "*.pythonhosted.org").build())
 *         .mount(BucketMount.s3("https://s3.amazonaws.com", "datasets", "/data", "DATA_KEY").asReadOnly())
 *         .runtime("gvisor")
 *         .build());
 * }</pre>
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CreateSandboxRequest(String template, String name, Map<String, String> env,
                                   Map<String, String> metadata, Resources resources, LifecycleUpdate lifecycle,
                                   NetworkPolicy network, List<VolumeMount> volumes, List<BucketMount> mounts, String fromCheckpoint,
                                   String runtime, Map<String, String> durability) {

    public CreateSandboxRequest(String template, String name, Map<String, String> env, Map<String, String> metadata, Resources resources,
                                LifecycleUpdate lifecycle, NetworkPolicy network) {
        this(template, name, env, metadata, resources, lifecycle, network, null, null, null, null, null);
    }

    /**
     * A sandbox made from a checkpoint: this instance's, or a durable one written by any instance
     * sharing the blob store. Its settings come from the checkpoint; only a name may be given.
     */
    public static CreateSandboxRequest fromCheckpoint(String checkpointId, String name) {
        return new CreateSandboxRequest(null, name, null, null, null, null, null, null, null,
                Objects.requireNonNull(checkpointId, "checkpointId"), null, null);
    }

    public CreateSandboxRequest {
        volumes = volumes == null || volumes.isEmpty() ? null : List.copyOf(volumes);
        mounts = mounts == null || mounts.isEmpty() ? null : List.copyOf(mounts);
        if (lifecycle != null && lifecycle.isEmpty()) lifecycle = null;
        durability = durability == null || durability.isEmpty() ? null : SandboxInfo.copy(durability);
        env = env == null || env.isEmpty() ? null : SandboxInfo.copy(env);
        metadata = metadata == null || metadata.isEmpty() ? null : SandboxInfo.copy(metadata);
        if (resources != null && resources.cpus() == null && resources.memoryMb() == null
                && resources.pids() == null && resources.diskMb() == null) {
            resources = null;
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link CreateSandboxRequest}; every setter is optional. */
    public static final class Builder {
        private String template;
        private String name;
        private final Map<String, String> env = new LinkedHashMap<>();
        private final Map<String, String> metadata = new LinkedHashMap<>();
        private Double cpus;
        private Integer memoryMb;
        private Integer pids;
        private Integer diskMb;
        private LifecycleUpdate lifecycle;
        private String checkpointEvery;
        private NetworkPolicy network;
        private final List<VolumeMount> volumes = new ArrayList<>();
        private final List<BucketMount> mounts = new ArrayList<>();
        private String runtime;

        private Builder() {
        }

        /**
         * What runs the sandbox: {@code runc} (a container on the host's kernel) or {@code gvisor}
         * (gVisor's user-space kernel between the sandbox and the host's); unset, the server's default.
         */
        public Builder runtime(String runtime) {
            this.runtime = runtime;
            return this;
        }

        public Builder template(String template) {
            this.template = template;
            return this;
        }

        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder env(String key, String value) {
            env.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public Builder env(Map<String, String> variables) {
            variables.forEach(this::env);
            return this;
        }

        public Builder metadata(String key, String value) {
            metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public Builder metadata(Map<String, String> labels) {
            labels.forEach(this::metadata);
            return this;
        }

        public Builder cpus(double cpus) {
            this.cpus = cpus;
            return this;
        }

        public Builder memoryMb(int memoryMb) {
            this.memoryMb = memoryMb;
            return this;
        }

        public Builder pids(int pids) {
            this.pids = pids;
            return this;
        }

        /**
         * The room in MiB for what the sandbox writes itself, like a container's writable-layer
         * size: the template's files do not count (and deleting them frees nothing); what it
         * wrote counts while it or one of its checkpoints holds it. Writes past it fail inside
         * the sandbox with "Disk quota exceeded"; deleting files it wrote makes room again.
         */
        public Builder diskMb(int diskMb) {
            this.diskMb = diskMb;
            return this;
        }

        /** Sets all four limits at once; null fields keep the server's defaults. */
        public Builder resources(Resources resources) {
            this.cpus = resources.cpus();
            this.memoryMb = resources.memoryMb();
            this.pids = resources.pids();
            this.diskMb = resources.diskMb();
            return this;
        }

        /** The idle policy fields that differ from the server's defaults; see {@link LifecycleUpdate}. */
        public Builder lifecycle(LifecycleUpdate lifecycle) {
            this.lifecycle = lifecycle;
            return this;
        }

        /**
         * Keeps the sandbox restorable on another node while it runs: a durable checkpoint with memory
         * this often (at least 5 s), from which another node resumes it if its node is lost.
         */
        public Builder checkpointEvery(Duration period) {
            this.checkpointEvery = ApiDurations.format(Objects.requireNonNull(period, "period"));
            return this;
        }

        /** The sandbox's network policy; without one it gets the server's default (deny everything unless the operator changed it). */
        public Builder network(NetworkPolicy network) {
            this.network = network;
            return this;
        }

        /** Mounts a volume (id or name) read-write at {@code path}; see {@link Volumes} for the sharing rules. */
        public Builder volume(String volume, String path) {
            return volume(new VolumeMount(volume, path, false));
        }

        /** Mounts a volume, read-only if the mount says so. */
        public Builder volume(VolumeMount mount) {
            volumes.add(Objects.requireNonNull(mount, "mount"));
            return this;
        }

        /**
         * Mounts an existing S3 bucket; the server mounts it (the key never enters the sandbox) and
         * refuses the create (422) if the secret is missing or the bucket cannot be listed with it.
         */
        public Builder mount(BucketMount mount) {
            mounts.add(Objects.requireNonNull(mount, "mount"));
            return this;
        }

        public CreateSandboxRequest build() {
            return new CreateSandboxRequest(template, name, env, metadata, new Resources(cpus, memoryMb, pids, diskMb), lifecycle, network,
                    volumes, mounts, null, runtime, checkpointEvery == null ? null : Map.of("checkpointEvery", checkpointEvery));
        }
    }
}

package io.stasis.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.stasis.json.PolicyJson;
import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.files.FileEvent;
import io.stasis.core.files.FileInfo;
import io.stasis.core.process.ProcessInfo;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.template.TemplateStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;

/** The JSON shapes the API returns. Field names are the wire contract (docs/API.md). */
final class Views {
    private Views() {
    }

    record ListView<T>(List<T> items, String nextCursor) {
    }

    record ResourcesView(double cpus, int memoryMb, int pids, int diskMb) {
        static ResourcesView of(Resources r) {
            return new ResourcesView(r.cpus(), r.memoryMb(), r.pids(), r.diskMb());
        }
    }

    record SandboxView(String id, String name, String template, String state, String stateReason, HibernationView hibernation,
                       Instant createdAt, ResourcesView resources, Map<String, String> env, Map<String, String> metadata,
                       String parentId, String checkpointId, Map<String, Object> lifecycle, Map<String, Object> durability, long generation,
                       String runtime,
                       @com.fasterxml.jackson.annotation.JsonInclude(JsonInclude.Include.NON_NULL)
                       DurableImageView durableImage,
                       @com.fasterxml.jackson.annotation.JsonInclude(JsonInclude.Include.NON_NULL)
                       List<BucketMountView> mounts) {
        /** With the sandbox's bucket mounts as recorded and what each still uploads (the answers of get and of lifecycle actions). */
        static SandboxView of(Sandbox s, SandboxBuckets buckets) {
            return of(s, buckets.bucketsOf(s.id()), i -> buckets.pendingUploads(s.id(), i));
        }

        /** With the sandbox's bucket mounts and, by index, what each still uploads. */
        static SandboxView of(Sandbox s, List<SandboxBucket> buckets, IntUnaryOperator pendingUploads) {
            var v = of(s);
            var mounts = IntStream.range(0, buckets.size()).mapToObj(i -> BucketMountView.of(buckets.get(i), pendingUploads.applyAsInt(i))).toList();
            return new SandboxView(v.id, v.name, v.template, v.state, v.stateReason, v.hibernation, v.createdAt, v.resources, v.env, v.metadata,
                    v.parentId, v.checkpointId, v.lifecycle, v.durability, v.generation, v.runtime, null, mounts);
        }

        /** As shown while its node is lost and nothing brings it back elsewhere: state {@code lost}, with why. */
        SandboxView lost(String why) {
            return new SandboxView(id, name, template, "lost", why, hibernation, createdAt, resources, env, metadata, parentId,
                    checkpointId, lifecycle, durability, generation, runtime, durableImage, mounts);
        }

        /** With its newest durable checkpoint ({@code durableImage}: the answers of get and resume), {@code null} if none. */
        SandboxView withDurableImage(Optional<DurableImage> image) {
            var view = image.map(i -> new DurableImageView(i.checkpoint().value(), i.digest(), i.takenAt())).orElse(null);
            return new SandboxView(id, name, template, state, stateReason, hibernation, createdAt, resources, env, metadata, parentId,
                    checkpointId, lifecycle, durability, generation, runtime, view, mounts);
        }

        static SandboxView of(Sandbox s) {
            String reason = s.state() instanceof SandboxState.Stopped stopped ? stopped.reason() : null;
            HibernationView hibernation = s.state() instanceof SandboxState.Hibernated h
                    ? new HibernationView(h.checkpoint().value(), h.imageBytes(), h.at()) : null;
            return new SandboxView(s.id().value(), s.name().orElse(null), s.template(), s.state().wireName(), reason, hibernation,
                    s.createdAt(), ResourcesView.of(s.resources()), s.env(), s.metadata(),
                    s.parentId().map(SandboxId::value).orElse(null), s.checkpointId().map(CheckpointId::value).orElse(null),
                    PolicyJson.lifecycle(s.lifecycle()), PolicyJson.durability(s.lifecycle()), s.generation(), s.runtime().wireName(), null, null);
        }
    }

    /**
     * A bucket mount as the API shows it: the secret's name, never its value; {@code pendingUploads}
     * only while files the sandbox wrote are still being uploaded after it let go of the mount.
     */
    record BucketMountView(String type, String endpoint, String region, String bucket, String prefix, String path, boolean readOnly,
                           String credentialsSecret, @JsonInclude(JsonInclude.Include.NON_NULL) Integer pendingUploads) {
        static BucketMountView of(SandboxBucket b, int pendingUploads) {
            return new BucketMountView(SandboxBucket.TYPE_S3, b.endpoint().toString(), b.region(), b.bucket(), b.prefix(),
                    b.path(), b.readOnly(), b.credentialsSecret(), pendingUploads > 0 ? pendingUploads : null);
        }
    }

    /** A sandbox's newest durable checkpoint and the SHA-256 of its descriptor in the blob store. */
    record DurableImageView(String checkpointId, String digest, Instant takenAt) {
    }

    /** For a hibernated sandbox: its process image, how big, and when it was taken. */
    record HibernationView(String checkpointId, long imageBytes, Instant takenAt) {
    }

    record CheckpointView(String id, String sandboxId, String name, boolean memory, String purpose, long sizeBytes, Instant createdAt,
                          boolean durable, String upload, Long logicalBytes, Long storedBytes, String uploadError, SparesView spares,
                          String runtime) {
        /** A durable checkpoint as its descriptor in the blob store tells it ({@code sizeBytes}: its image stream's length). */
        static CheckpointView of(CheckpointDescriptor d) {
            return new CheckpointView(d.checkpoint().value(), d.sandbox().value(), d.name().orElse(null), d.memory(), d.purpose().wireName(),
                    d.memory() ? d.logicalBytes() - d.roots().getLast().bytes() : 0, d.createdAt(), true, "durable", d.logicalBytes(),
                    d.storedBytes(), null, null, d.runtime().wireName());
        }

        static CheckpointView of(Checkpoint c, Optional<CheckpointUpload> upload, SparesView spares) {
            var u = upload.orElse(null);
            boolean durable = u != null && u.durable();
            return new CheckpointView(c.id().value(), c.sandboxId().value(), c.name().orElse(null), c.memory(), c.purpose().wireName(),
                    c.sizeBytes(), c.createdAt(), durable, u == null ? "none" : u.state().wireName(),
                    durable ? u.logicalBytes() : null, durable ? u.storedBytes() : null,
                    u == null ? null : u.error().orElse(null), spares, c.runtime().wireName());
        }
    }

    /** Forks of a memory checkpoint kept restored ahead: how many are wanted, and how many are ready now. */
    record SparesView(int wanted, int ready) {
    }

    record FileView(String path, String name, String type, long size, String mode, Instant modifiedAt, String symlinkTarget) {
        static FileView of(FileInfo f) {
            return new FileView(f.path(), f.name(), f.type().wireName(), f.size(), String.format("%04o", f.mode()),
                    f.mtime(), f.symlinkTarget().orElse(null));
        }
    }

    record TemplateView(String name, String description, String status, String version, Instant builtAt, Long sizeBytes,
                        Double progress, String message) {
        static TemplateView of(TemplateStatus t) {
            return new TemplateView(t.name(), t.description(), t.status(), t.version().orElse(null), t.builtAt().orElse(null),
                    t.sizeBytes().orElse(null), t.progress().orElse(null), t.message().orElse(null));
        }
    }

    record ExecView(int exitCode, String signal, String stdout, String stderr, String encoding, boolean stdoutTruncated,
                    boolean stderrTruncated, boolean timedOut, long durationMs) {
    }

    record ExitEvent(int exitCode, String signal, boolean timedOut, long durationMs) {
    }

    /** A change under a watched path; {@code from} only for a move that started inside the watched tree. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record FileEventView(String type, String path, String fileType, String from) {
        static FileEventView of(FileEvent e) {
            return new FileEventView(e.kind().wireName(), e.path(), e.type().wireName(), e.from().orElse(null));
        }
    }

    /** Output from {@code from} to {@code to} of a stream was dropped to bound its size. */
    record DroppedEvent(String stream, long from, long to) {
    }

    /** {@code encoding} appears only when it is base64. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record OutputEvent(String data, long offset, String encoding) {
    }

    record Health(String status) {
    }

    record ProcessView(String id, long pid, List<String> cmd, String cwd, String tag, Instant startedAt, String status, Integer exitCode,
                       String signal, boolean keepAlive, Instant keepAliveUntil, long stdoutBytes, long stderrBytes, boolean stdin,
                       boolean pty) {
        static ProcessView of(ProcessInfo p) {
            return new ProcessView(p.id(), p.pid(), p.cmd(), p.cwd().orElse(null), p.tag().orElse(null), p.startedAt(), p.status(),
                    p.exit().map(e -> e.exitCode()).orElse(null), p.exit().flatMap(e -> e.signal()).orElse(null), p.keepAlive(),
                    p.keepAliveUntil().orElse(null), p.stdoutBytes(), p.stderrBytes(), p.stdin(), p.terminal());
        }
    }

    record OutputView(String stdout, long stdoutStart, long stdoutOffset, String stderr, long stderrStart, long stderrOffset, String encoding,
                      ProcessView process) {
    }
}

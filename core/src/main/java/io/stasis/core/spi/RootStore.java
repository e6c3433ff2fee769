package io.stasis.core.spi;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.SandboxId;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Root filesystems: read-only templates, one writable copy-on-write root per sandbox, and
 * read-only root snapshots of checkpoints. Creating a root or a snapshot costs the same whatever
 * the size of what it copies.
 *
 * <p><b>Disk limits.</b> Every root is created with a limit, {@code diskBytes}: the room it has for
 * what the sandbox writes itself, like a container's writable-layer size. What the root shares
 * with its template or the checkpoint it was branched from does not count, and deleting it frees
 * nothing. What the sandbox wrote counts while the root or one of its checkpoints still holds it:
 * deleted in the root but kept by a checkpoint, it stays counted until that checkpoint is
 * deleted. A write that would go past the limit fails inside the sandbox with {@code EDQUOT}
 * ("Disk quota exceeded"); the sandbox stays healthy, and deleting what it wrote makes room
 * again. The limit is per root: the sum over a tenant's sandboxes bounds what they can make the
 * host store beyond their templates (each block is charged once, to the root that wrote it).
 * An implementation that cannot count this way may count more (the shared files too) and must
 * say so.
 */
public interface RootStore {

    /**
     * Creates the writable root of a sandbox from a template.
     * <p>Prerequisites: the template is installed; no root exists for {@code id}; {@code diskBytes}
     * is positive.
     * <p>Effects on success: returns the root's path on the host; the sandbox may write at most
     * {@code diskBytes} into it, the template's files not counted.
     * <p>On failure: {@code template_not_found} or {@code runtime_failed} (with the step and the
     * tool's or the kernel's error); no root is left.
     */
    Path createRoot(SandboxId id, String template, long diskBytes);

    /**
     * Creates the writable root of a sandbox from a checkpoint's root snapshot (a branch: a fork,
     * or a restore into a new sandbox).
     * <p>Prerequisites: the checkpoint has a root snapshot; no root exists for {@code id};
     * {@code diskBytes} is positive.
     * <p>Effects on success: returns the root's path on the host, holding what the snapshot holds;
     * the sandbox may write at most {@code diskBytes} into it, the snapshot's files not counted.
     * <p>On failure: {@code runtime_failed}; no root is left.
     */
    Path createRootFrom(SandboxId id, CheckpointId checkpoint, long diskBytes);

    /**
     * Replaces a sandbox's root, at the same path, with one branched from a checkpoint's root
     * snapshot (as {@link #createRootFrom} makes it): how a sandbox started ahead of demand gets the
     * root of a fork ({@link SandboxRuntime#reroot}). The old root is put aside, still usable by
     * what holds it open, until {@link #deleteReplacedRoot}.
     * <p>Prerequisites: the sandbox has a root and no old root put aside; the checkpoint has a root
     * snapshot; {@code diskBytes} is positive.
     * <p>Effects on success: returns the root's path, unchanged, where the new root now is, with the
     * limit {@code diskBytes}.
     * <p>On failure: {@code runtime_failed}; the old root is back at its path.
     */
    Path replaceRoot(SandboxId id, CheckpointId checkpoint, long diskBytes);

    /**
     * Deletes the old root a {@link #replaceRoot} put aside. Idempotent. {@link #deleteRoot} deletes
     * it too, and {@link #listRoots} lists the sandbox while it has one.
     */
    void deleteReplacedRoot(SandboxId id);

    /**
     * Changes the disk limit of an existing root, e.g. when a sandbox made ahead of demand is
     * handed out with other resources, or to apply limits to roots made before there were any.
     * <p>Prerequisites: the root exists; {@code diskBytes} is positive. It may be below what the
     * root holds already: writes then fail until enough is deleted.
     * <p>Effects on success: the new limit applies to the next write. Idempotent.
     * <p>On failure: {@code runtime_failed}; the old limit stays.
     */
    void limitRoot(SandboxId id, long diskBytes);

    /** The root of a sandbox, if it has one. */
    Optional<Path> root(SandboxId id);

    /**
     * What counts against the disk limit of the sandbox's root now, writes not yet on disk
     * included; empty if it has no root, or this store cannot tell. By default it cannot.
     */
    default Optional<DiskUsage> diskUsage(SandboxId id) {
        return Optional.empty();
    }

    /**
     * @param writtenBytes   what the root wrote itself and something still holds (where the store
     *                       cannot tell writes from shared files, everything the root holds)
     * @param inheritedBytes what roots it descends from wrote, and it or their checkpoints still
     *                       hold, charged to it since they were deleted
     */
    record DiskUsage(long writtenBytes, long inheritedBytes) {
        public long totalBytes() {
            return writtenBytes + inheritedBytes;
        }
    }

    /** Removes a sandbox's root and everything in it. Idempotent. */
    void deleteRoot(SandboxId id);

    /** Every sandbox that has a root here (for reconciliation). */
    Set<SandboxId> listRoots();

    /**
     * Takes a read-only snapshot of a sandbox's root for a checkpoint. Writes the sandbox made
     * before the call are in it. Crash-consistent only if the sandbox is frozen meanwhile.
     * <p>On failure: {@code runtime_failed}; no snapshot is left.
     */
    void snapshotRoot(SandboxId id, CheckpointId checkpoint);

    /**
     * Writes what the sandbox wrote but the host has not yet put on disk, if there is much of it:
     * a snapshot waits for that write-out, and the sandbox is frozen while a snapshot is taken.
     * Called before the freeze, it keeps the frozen moment short. Optional.
     */
    default void flush(SandboxId id) {
    }

    /** Whether a checkpoint's root snapshot exists. */
    boolean hasSnapshot(CheckpointId checkpoint);

    /** Removes a checkpoint's root snapshot. Idempotent. Roots branched from it are not affected. */
    void deleteSnapshot(CheckpointId checkpoint);

    /**
     * Serializes a checkpoint's root snapshot for durable storage: the whole snapshot, or with
     * {@code parent} only what changed since that earlier snapshot of the same sandbox.
     * <p>Prerequisites: both snapshots exist here ({@link #hasSnapshot}).
     * <p>Effects on success: {@code reader} has read the whole stream; returns what it returned.
     * The snapshots are unchanged.
     * <p>On failure: {@code runtime_failed} (the tool's error); what the reader stored of a cut-short
     * stream must not be used.
     */
    <R> R sendSnapshot(CheckpointId checkpoint, Optional<CheckpointId> parent, StreamReader<R> reader);

    /**
     * Recreates a checkpoint's root snapshot from a stream made by {@link #sendSnapshot}, here or
     * on another host.
     * <p>Prerequisites: no snapshot {@code checkpoint} exists here; for an incremental stream, the
     * parent's snapshot does (received earlier or taken here).
     * <p>Effects on success: {@link #hasSnapshot} is true; the snapshot is read-only and holds
     * what the sent one held, and roots can be branched from it ({@link #createRootFrom}).
     * <p>On failure: {@code runtime_failed}; no snapshot is left.
     */
    void receiveSnapshot(CheckpointId checkpoint, InputStream stream);

    /** Every checkpoint root snapshot here (for reconciliation). */
    Set<CheckpointId> listSnapshots();

    /** The installed templates. */
    List<TemplateImage> templates();

    default Optional<TemplateImage> template(String name) {
        return templates().stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /**
     * Builds a template from a recipe and installs it under its name, replacing an older version.
     * Sandboxes made from the older version keep their roots.
     * <p>Effects on success: the template is read-only and its files belong to {@code owner}.
     * <p>On failure: no partial template is visible; the previous version, if any, stays.
     */
    TemplateImage installTemplate(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress);

    /**
     * Installs a read-only snapshot of a sandbox's root as template {@code image.name()}: a step of
     * a template build, or its result. Replaces an older version as {@link #installTemplate} does;
     * the files keep their owners (they are the sandbox's already).
     * <p>Prerequisites: the sandbox has a root; nothing writes into it meanwhile (a build's step has ended).
     * <p>Effects on success: returns {@code image} with the size of the files; roots can be created from it.
     * <p>On failure: {@code invalid_request} for a bad name, else {@code runtime_failed}; no
     * partial template is visible; the previous version, if any, stays.
     */
    TemplateImage installTemplateFromRoot(SandboxId id, TemplateImage image);

    /**
     * Installs a read-only copy of installed template {@code source} as {@code image.name()} (a kept
     * version): as cheap as a root's snapshot. The files are the source's, as they are.
     * <p>On failure: {@code template_not_found} if there is no {@code source}; no partial template is visible.
     */
    TemplateImage copyTemplate(String source, TemplateImage image);

    /**
     * Deletes an installed template. Roots made from it are independent and stay. Returns false
     * if there was none. Idempotent.
     */
    boolean deleteTemplate(String name);
}

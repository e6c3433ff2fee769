package io.stasis.core.lifecycle;

import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.template.TemplateService;
import io.stasis.core.template.TemplateVersions;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.SandboxVolumes;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of sandboxes: create, look up, delete, and bring the catalog, the runtime and the
 * root store back into agreement after a restart. The catalog says what should exist; the runtime
 * and the disk say what does.
 */
public final class SandboxService {
    private static final Logger log = LoggerFactory.getLogger(SandboxService.class);
    /** Room a new sandbox's disk must have beyond its template's size (process output, a shell's history...). */
    static final int MIN_FREE_DISK_MB = 16;

    private final Catalog catalog;
    private final RootStore roots;
    private final SandboxRuntime runtime;
    private final TemplateService templates;
    private final Clock clock;
    private final Duration templateWait;
    private final SandboxLocks locks;
    private final EventLog events;
    private final ActivityTracker activity;
    private final FaultPoints faults;
    private final QuotaGuard quotas;
    private final ForkSpares spares;
    private final WarmPool pool;
    private final NetworkService network;
    private final SandboxVolumes volumes;
    private final SandboxBuckets buckets;
    private final SandboxParts parts;

    /** @param pool sandboxes started ahead of demand; a create asking for other resources than theirs gets them applied */
    public SandboxService(SandboxParts parts, TemplateService templates, Duration templateWait, WarmPool pool, ForkSpares spares) {
        this.volumes = parts.volumes();
        this.buckets = parts.buckets();
        this.spares = spares;
        this.faults = parts.faults();
        this.quotas = parts.quotas();
        this.catalog = parts.catalog();
        this.locks = parts.locks();
        this.events = parts.events();
        this.activity = parts.activity();
        this.roots = parts.roots();
        this.runtime = parts.runtime();
        this.templates = templates;
        this.parts = parts;
        this.clock = parts.clock();
        this.templateWait = templateWait;
        this.network = parts.network();
        this.pool = pool;
    }

    /** Starts keeping warm sandboxes for these templates (those not built yet are skipped). */
    public void warmUp(Iterable<String> templateNames) {
        templateNames.forEach(pool::refill);
    }

    /**
     * Creates and starts a sandbox.
     * <p>Effects on success: the sandbox runs and is in the catalog.
     * <p>On failure: nothing of it remains (root, runtime state, catalog row); {@code quota_exceeded}
     * if the tenant would hold more than its quota.
     */
    public Sandbox create(SandboxSpec request) {
        templates.requireVisible(request.tenant(), request.template());
        var spec = withTemplateEnv(pinned(request));
        parts.requireDiskAllowed(spec.resources(), "resources.diskMb", "");
        spec.network().ifPresent(policy -> network.validate(spec.tenant(), policy)); // the secrets its header rules name exist
        quotas.requireRuntime(spec.tenant(), spec.runtime(), "create");
        try (var claim = locks.claimNames(spec.tenant(), spec.name().stream().toList(), catalog::findByName)) {
            return quotas.admit(spec.tenant(), demandOfNew(spec.resources(), spec.buckets().size()), () -> {
                templates.awaitReady(spec.tenant(), spec.template(), templateWait);
                requireDiskRoom(spec);
                // Warm sandboxes mount nothing: one that asks for volumes or buckets, or another runtime, starts fresh.
                var warm = spec.volumes().isEmpty() && spec.buckets().isEmpty() && spec.runtime() == pool.runtime()
                        ? pool.take(spec.template()) : Optional.<SandboxId>empty();
                if (warm.isPresent()) {
                    try {
                        return locks.exclusive(warm.get(), () -> adoptWarm(warm.get(), spec));
                    } finally {
                        pool.refill(spec.template());
                    }
                }
                var id = SandboxId.random();
                return locks.exclusive(id, () -> createLocked(id, spec));
            });
        }
    }

    /**
     * The spec with its template named at its current version ({@code app@3}) where the template keeps
     * versions: the sandbox records the version it was made from, and is made from that version's copy.
     */
    public SandboxSpec pinned(SandboxSpec spec) {
        String pinned = templates.pin(spec.template());
        if (pinned.equals(spec.template())) return spec;
        return new SandboxSpec(pinned, spec.name(), spec.env(), spec.metadata(), spec.resources(), spec.lifecycle(), spec.network(),
                spec.tenant(), spec.volumes(), spec.buckets(), spec.runtime());
    }

    /** The spec with its template's variables under its own (a built template records what its ENV steps set). */
    public SandboxSpec withTemplateEnv(SandboxSpec spec) {
        var templateEnv = roots.template(spec.template()).map(t -> t.config().env()).orElse(Map.of());
        if (templateEnv.isEmpty()) return spec;
        var env = new LinkedHashMap<>(templateEnv);
        env.putAll(spec.env());
        return new SandboxSpec(spec.template(), spec.name(), env, spec.metadata(), spec.resources(), spec.lifecycle(), spec.network(),
                spec.tenant(), spec.volumes(), spec.buckets(), spec.runtime());
    }

    /**
     * The user and working directory a command runs with in this sandbox when its call names none:
     * what its template's build ended with (a Dockerfile's USER and WORKDIR), as {@code docker exec} does.
     */
    public ExecDefaults execDefaults(Sandbox sandbox) {
        var config = roots.template(sandbox.template()).filter(t -> TemplateService.visibleTo(t, sandbox.tenant())).map(t -> t.config());
        return new ExecDefaults(config.flatMap(c -> c.user()), config.flatMap(c -> c.workdir()));
    }

    /** See {@link #execDefaults}. */
    public record ExecDefaults(Optional<String> user, Optional<String> cwd) {
    }

    /** The sandboxes made from a template, in every tenant (what stops its deletion). */
    public List<Sandbox> usingTemplate(String template) {
        return catalog.all().stream().filter(s -> TemplateVersions.isOf(s.template(), template)).toList();
    }

    /** The sandboxes with a metadata key, in every tenant. */
    public List<Sandbox> withMetadataKey(String key) {
        return catalog.all().stream().filter(s -> s.metadata().containsKey(key)).toList();
    }

    /**
     * What a new running sandbox with these resources and bucket mounts adds to its tenant's usage:
     * a running sandbox, its memory and its mounts' daemons' ({@link SandboxBuckets#DAEMON_MEMORY_MB}
     * each), its disk.
     */
    public static TenantUsage demandOfNew(Resources resources, int bucketMounts) {
        return new TenantUsage(1, resources.memoryMb() + (long) bucketMounts * SandboxBuckets.DAEMON_MEMORY_MB, resources.diskMb());
    }

    /** What a hibernated or stopped sandbox adds by running again: its disk is counted already. */
    public static TenantUsage demandOfResume(Resources resources, int bucketMounts) {
        return new TenantUsage(1, resources.memoryMb() + (long) bucketMounts * SandboxBuckets.DAEMON_MEMORY_MB, 0);
    }

    private Sandbox createLocked(SandboxId id, SandboxSpec spec) {
        long start = System.nanoTime();
        Path root = roots.createRoot(id, spec.template(), spec.resources().diskBytes());
        try {
            var opening = network.openAhead(id, spec.network().orElse(network.defaultPolicy()), Optional.empty());
            opening.runBeside(() -> {
                var mounts = new ArrayList<>(volumes.hostMounts(spec.volumes()));
                mounts.addAll(buckets.mount(id, spec.tenant(), spec.buckets()));
                runtime.create(new RuntimeSpec(id, root, id.hostname(), spec.resources(), opening.link(), mounts, spec.runtime()));
            });
            // Before the sandbox's record: a crash in between leaves rows of no sandbox, which nothing reads.
            if (!spec.volumes().isEmpty()) volumes.setMounts(id, spec.volumes());
            buckets.record(id, spec.buckets());
            network.record(id);
            return record(id, spec, start, false);
        } catch (RuntimeException e) {
            undoCreate(id, e);
            buckets.discard(id, spec.buckets().size(), e);
            throw e;
        }
    }

    /** Hands out a warm sandbox: its limits become the requested ones, then it is recorded. */
    private Sandbox adoptWarm(SandboxId id, SandboxSpec spec) {
        long start = System.nanoTime();
        try {
            if (!spec.resources().equals(pool.resources())) runtime.updateResources(id, spec.resources());
            if (spec.resources().diskMb() != pool.resources().diskMb()) roots.limitRoot(id, spec.resources().diskBytes());
            network.adopt(id, spec.network().orElse(network.defaultPolicy()));
            return record(id, spec, start, true);
        } catch (RuntimeException e) {
            undoCreate(id, e);
            throw e;
        }
    }

    /**
     * At least the template's size plus some room. Where the root store counts only what a
     * sandbox writes (see {@link RootStore}) the template's files do not need it; a store that
     * must count them too (btrfs without simple quotas) does, or the sandbox could not even
     * start. Asked everywhere, so a request valid on one host is valid on every host.
     */
    private void requireDiskRoom(SandboxSpec spec) {
        roots.template(spec.template()).ifPresent(template -> {
            long neededMb = ceilMb(template.sizeBytes()) + MIN_FREE_DISK_MB;
            if (spec.resources().diskMb() < neededMb)
                throw StasisException.invalid("resources.diskMb", "must be at least " + neededMb + " for template '" + template.name()
                        + "' (its files take " + ceilMb(template.sizeBytes()) + " MiB of the disk, and a sandbox needs "
                        + MIN_FREE_DISK_MB + " MiB more to start), was " + spec.resources().diskMb());
        });
    }

    private static long ceilMb(long bytes) {
        return (bytes + (1 << 20) - 1) >> 20;
    }

    private Sandbox record(SandboxId id, SandboxSpec spec, long start, boolean warm) {
        var sandbox = new Sandbox(id, spec.name(), spec.template(), SandboxState.RUNNING, clock.instant(),
                spec.resources(), spec.env(), spec.metadata(), Optional.empty(), Optional.empty(), spec.lifecycle(), spec.tenant(), spec.runtime());
        catalog.insert(sandbox);
        activity.touch(id);
        events.lifecycle(id, "none", "running", "api");
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("template", spec.template()).addKeyValue("warm", warm)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("sandbox created");
        return sandbox;
    }

    private void undoCreate(SandboxId id, RuntimeException cause) {
        try {
            runtime.destroy(id);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
        try {
            roots.deleteRoot(id);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
        try {
            network.release(id);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * The sandbox with this id, or with this name in the default tenant; {@code sandbox_not_found}
     * if none (or being deleted). Callers acting for a tenant use {@link #get(TenantId, String)}.
     */
    public Sandbox get(String idOrName) {
        return get(TenantId.DEFAULT, idOrName, true);
    }

    /**
     * The tenant's sandbox with this id or name; {@code sandbox_not_found} if none, if it is being
     * deleted, or if it is another tenant's (whose sandboxes do not exist for this one).
     */
    public Sandbox get(TenantId tenant, String idOrName) {
        return get(tenant, idOrName, false);
    }

    private Sandbox get(TenantId tenant, String idOrName, boolean anyTenantById) {
        Optional<Sandbox> found = SandboxId.isValid(idOrName)
                ? catalog.find(new SandboxId(idOrName)).filter(s -> anyTenantById || s.tenant().equals(tenant))
                : catalog.findByName(tenant, idOrName);
        return found.filter(s -> !(s.state() instanceof SandboxState.Deleted))
                .orElseThrow(() -> StasisException.sandboxNotFound(idOrName));
    }

    public Page<Sandbox> list(SandboxQuery query) {
        return catalog.list(query);
    }

    /** The host path of the sandbox's root filesystem. */
    public Path rootOf(Sandbox sandbox) {
        return roots.root(sandbox.id()).orElseThrow(() -> StasisException.runtimeFailed(sandbox.id().value(),
                "files", "the sandbox's root filesystem is missing", null));
    }

    /**
     * Notes that a sandbox's processes are gone without being asked, so the catalog stops calling it
     * running: stopped, with the reason {@code out_of_memory} where the host's out-of-memory killer
     * ended one of its processes (a gVisor sandbox past its memory ends whole), else
     * {@code init_exited} (its process 1 ended: {@code kill 1} inside, a crash, a kill from the host).
     */
    public void markExited(SandboxId id) {
        locks.exclusive(id, () -> {
            catalog.find(id).filter(s -> s.state().hasProcesses()).ifPresent(s -> {
                var status = runtime.status(id);
                if (status == RuntimeStatus.RUNNING || status == RuntimeStatus.FROZEN) return;
                String reason = runtime.oomKills(id) > 0 ? "out_of_memory" : "init_exited"; // read before its cgroup goes
                log.atWarn().addKeyValue("sandbox", id).addKeyValue("was", s.state().wireName()).addKeyValue("reason", reason)
                        .log("sandbox stopped by itself");
                runtime.destroy(id);
                buckets.release(id);
                catalog.update(s.withState(new SandboxState.Stopped(reason)));
                events.lifecycle(id, s.state().wireName(), "stopped", reason);
            });
            return null;
        });
    }

    /**
     * Deletes a sandbox: its processes, runtime state, root filesystem and checkpoints.
     * <p>Effects on success: nothing of it remains. The catalog marks it deleted first, so a crash
     * halfway is finished by the {@link Reconciler}.
     */
    public void delete(String idOrName, LifecycleService.Reason reason) {
        var sandbox = get(idOrName);
        locks.exclusive(sandbox.id(), () -> {
            var current = catalog.find(sandbox.id());
            if (current.isEmpty() || current.get().state() instanceof SandboxState.Deleted) throw StasisException.sandboxNotFound(idOrName);
            catalog.update(current.get().withState(SandboxState.DELETED));
            faults.reach("delete.after-mark");
            long start = System.nanoTime();
            runtime.destroy(sandbox.id());
            faults.reach("delete.after-destroy");
            // Whatever the sandbox wrote to its buckets is uploaded before they go (a mount that cannot be flushed stays, see release;
            // a crash before this leaves them to the reconciler).
            buckets.release(sandbox.id());
            roots.deleteRoot(sandbox.id());
            for (var checkpoint : catalog.checkpointsOf(sandbox.id())) {
                spares.discard(checkpoint.id());
                runtime.deleteImage(checkpoint.id());
                roots.deleteSnapshot(checkpoint.id());
                catalog.deleteCheckpoint(checkpoint.id());
                catalog.deleteUpload(checkpoint.id());
            }
            // Before the record goes: the event is filed under the sandbox's tenant, which the record tells.
            events.lifecycle(sandbox.id(), current.get().state().wireName(), "deleted", reason.wireName());
            network.release(sandbox.id()); // before the row goes: the row holds the network's slot until its rules are gone
            catalog.delete(sandbox.id());
            log.atInfo().addKeyValue("sandbox", sandbox.id()).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("sandbox deleted");
            return null;
        });
        activity.forget(sandbox.id());
    }

    /** Deletes on behalf of a caller. */
    public void delete(String idOrName) {
        delete(idOrName, LifecycleService.Reason.API);
    }

}

package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * The sandboxes' OCI bundles, {@code bundles/<id>/}: the {@code config.json} runc starts and
 * restores from, the pid file runc writes, and the root each sandbox runs on (read back from the
 * bundle after a restart of the service).
 */
final class Bundles {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Path dir;
    private final Path initDir;
    private final Path criuConfig;
    private final int idMapBase;
    private final SandboxCgroups cgroups;
    private final UnaryOperator<ObjectNode> engineChanges;
    private final Map<SandboxId, Path> roots = new ConcurrentHashMap<>();

    Bundles(Path dir, Path initDir, Path criuConfig, int idMapBase, SandboxCgroups cgroups) {
        this(dir, initDir, criuConfig, idMapBase, cgroups, UnaryOperator.identity());
    }

    /** @param engineChanges what the engine that runs the bundles (runc, runsc) needs changed in the spec {@link OciSpec} builds */
    Bundles(Path dir, Path initDir, Path criuConfig, int idMapBase, SandboxCgroups cgroups, UnaryOperator<ObjectNode> engineChanges) {
        this.dir = dir;
        this.initDir = initDir;
        this.criuConfig = criuConfig;
        this.idMapBase = idMapBase;
        this.cgroups = cgroups;
        this.engineChanges = engineChanges;
    }

    /** Where the bundles are: a directory per sandbox. */
    Path dir() {
        return dir;
    }

    Path pidFile(SandboxId id) {
        return dir.resolve(id.value()).resolve("init.pid");
    }

    /** Where a sandbox's network namespace is bound while it starts in one made for it (gVisor). */
    Path networkNamespaceFile(SandboxId id) {
        return dir.resolve(id.value()).resolve("netns");
    }

    Path write(RuntimeSpec spec) {
        return write(spec, false, Optional.empty());
    }

    /** The bundle; with {@code madeNetworkNamespace}, the sandbox joins the one at {@link #networkNamespaceFile}. */
    Path write(RuntimeSpec spec, boolean madeNetworkNamespace) {
        return write(spec, madeNetworkNamespace, Optional.empty());
    }

    /**
     * The bundle of a start or restore that runs without a CPU quota until {@link #applyDeferredLimits}:
     * the spec's limits but for the quota (as many cores as the host has), and the whole limits in a
     * file beside it, there until they are applied, so that a sandbox adopted after a crash in
     * between gets them too.
     */
    Path writeWithCpuQuotaDeferred(RuntimeSpec spec, boolean madeNetworkNamespace) {
        var limits = spec.resources();
        Path file = deferredLimitsFile(spec.id());
        try {
            Files.createDirectories(file.getParent());
            var json = JSON.createObjectNode().put("cpus", limits.cpus()).put("memoryMb", limits.memoryMb())
                    .put("pids", limits.pids()).put("diskMb", limits.diskMb());
            writeAtomically(file, json);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(spec.id().value(), "write bundle", e.getMessage(), e);
        }
        double allCores = Math.min(Resources.MAX_CPUS, Math.max(limits.cpus(), Runtime.getRuntime().availableProcessors()));
        var unthrottled = new Resources(allCores, limits.memoryMb(), limits.pids(), limits.diskMb());
        return write(spec.withResources(unthrottled), madeNetworkNamespace, Optional.empty());
    }

    /** The limits {@link #writeWithCpuQuotaDeferred} left for later, applied to the cgroups and the bundle; nothing if none wait. */
    void applyDeferredLimits(SandboxId id) {
        Path file = deferredLimitsFile(id);
        if (!Files.exists(file)) return;
        try {
            var json = JSON.readTree(file.toFile());
            updateResources(id, new Resources(json.get("cpus").asDouble(), json.get("memoryMb").asInt(), json.get("pids").asInt(),
                    json.get("diskMb").asInt()));
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "apply the deferred limits", e.getMessage(), e);
        }
    }

    private Path deferredLimitsFile(SandboxId id) {
        return dir.resolve(id.value()).resolve("limits.deferred");
    }

    /** The bundle of a restore through runc, which runs {@code hook} once CRIU has made the namespaces. */
    Path writeForRestore(RuntimeSpec spec, List<String> hook) {
        return write(spec, false, Optional.of(hook));
    }

    private Path write(RuntimeSpec spec, boolean madeNetworkNamespace, Optional<List<String>> prestartHook) {
        Path bundle = dir.resolve(spec.id().value());
        try {
            Files.createDirectories(bundle);
            var oci = OciSpec.build(JSON, spec.root(), initDir, criuConfig, spec.hostname(), cgroups.path(spec.id()),
                    idMapBase, spec.resources());
            if (spec.network().isPresent()) {
                // The sandbox asks Stasis's resolver on its gateway, whatever its image says.
                Path resolvConf = bundle.resolve("resolv.conf");
                Files.writeString(resolvConf, "nameserver " + spec.network().get().gateway().getHostAddress() + "\n");
                OciSpec.bindReadOnly(oci, "/etc/resolv.conf", resolvConf);
            }
            if (madeNetworkNamespace) OciSpec.joinNetworkNamespace(oci, networkNamespaceFile(spec.id()));
            prestartHook.ifPresent(hook -> OciSpec.addPrestartHook(oci, hook));
            for (var mount : spec.mounts()) OciSpec.bindVolume(oci, mount.destination(), mount.source(), mount.readOnly());
            if (spec.background()) OciSpec.runInBackground(oci);
            writeAtomically(bundle.resolve("config.json"), engineChanges.apply(oci));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(spec.id().value(), "write bundle", e.getMessage(), e);
        }
        roots.put(spec.id(), spec.root());
        return bundle;
    }

    private static void writeAtomically(Path file, ObjectNode json) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        JSON.writeValue(tmp.toFile(), json);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The usual CPU weight for a sandbox started in the background (its bundle's weight matters at a start only). */
    void foreground(SandboxId id) {
        CgroupLimits.foreground(id, cgroups.path(id));
    }

    void updateResources(SandboxId id, Resources resources) {
        CgroupLimits.apply(id, cgroups.path(id), resources);
        // The bundle is what a later restore reads: keep it in step with the cgroups.
        Path file = dir.resolve(id.value()).resolve("config.json");
        try {
            var spec = (ObjectNode) JSON.readTree(file.toFile());
            OciSpec.setResources(spec, resources);
            writeAtomically(file, engineChanges.apply(spec));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "update bundle", e.getMessage(), e);
        }
    }

    /** The root the sandbox runs on now (after a reroot, the new one). */
    Path rootOf(SandboxId id) {
        return roots.computeIfAbsent(id, this::rootFromBundle);
    }

    void moveRoot(SandboxId id, Path newRoot) {
        roots.put(id, newRoot);
    }

    void forgetRoot(SandboxId id) {
        roots.remove(id);
    }

    private Path rootFromBundle(SandboxId id) {
        Path file = dir.resolve(id.value()).resolve("config.json");
        try {
            return Path.of(JSON.readTree(file.toFile()).path("root").path("path").asText());
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "find root", "no bundle at " + file, e);
        }
    }
}

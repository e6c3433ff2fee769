package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.sandbox.Resources;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The OCI runtime configuration of a sandbox: every namespace including user (root inside maps to
 * an unprivileged host range), Docker's default capabilities, a Docker-like seccomp allowlist,
 * Docker's masked and read-only paths, no host devices, {@code no_new_privs}, and cgroup limits.
 */
final class OciSpec {
    /** Whether the kernel accounts swap per cgroup (v1 memsw; always on v2): runc refuses a swap limit otherwise. */
    private static final boolean SWAP_ACCOUNTING = Files.exists(Path.of("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"))
            || Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers"));

    /** Where the init binary appears inside every sandbox (a read-only bind mount). */
    static final String INIT_DIR = "/.stasis/bin";
    static final String INIT_PATH = INIT_DIR + "/" + HelperBinary.INIT;

    private static final List<String> CAPABILITIES = List.of(
            "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID",
            "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",
            "CAP_AUDIT_WRITE");
    private static final List<String> MASKED_PATHS = List.of(
            "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
            "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap");
    private static final List<String> READONLY_PATHS = List.of(
            "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger");
    private static final long CPU_PERIOD_US = 100_000;

    private OciSpec() {
    }

    /** The sandbox joins the network namespace bound at {@code netns} instead of getting a new one (gVisor: see RunscRuntime). */
    static void joinNetworkNamespace(ObjectNode spec, Path netns) {
        for (var ns : spec.path("linux").path("namespaces"))
            if (ns.path("type").asText().equals("network")) ((ObjectNode) ns).put("path", netns.toString());
    }

    /**
     * @param root       the sandbox's root filesystem on the host
     * @param initDir    host directory holding the stasis-init binary
     * @param criuConfig CRIU configuration for checkpoints and restores of this sandbox
     * @param hostname   hostname inside
     * @param cgroupPath cgroup of the sandbox, relative to each controller's root
     * @param idMapBase  host id of root inside
     */
    static ObjectNode build(ObjectMapper json, Path root, Path initDir, Path criuConfig, String hostname, String cgroupPath,
                            int idMapBase, Resources resources) {
        ObjectNode spec = json.createObjectNode();
        spec.put("ociVersion", "1.0.2");
        spec.put("hostname", hostname);

        ObjectNode rootNode = spec.putObject("root");
        rootNode.put("path", root.toString());
        rootNode.put("readonly", false);

        ObjectNode process = spec.putObject("process");
        process.put("terminal", false);
        process.putObject("user").put("uid", 0).put("gid", 0);
        process.putArray("args").add(INIT_PATH);
        process.putArray("env").add("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        process.put("cwd", "/");
        process.put("noNewPrivileges", true);
        ObjectNode caps = process.putObject("capabilities");
        for (String set : List.of("bounding", "effective", "permitted")) {
            ArrayNode list = caps.putArray(set);
            CAPABILITIES.forEach(list::add);
        }

        ArrayNode mounts = spec.putArray("mounts");
        mount(mounts, "/proc", "proc", "proc", List.of("nosuid", "noexec", "nodev"));
        mount(mounts, "/dev", "tmpfs", "tmpfs", List.of("nosuid", "strictatime", "mode=755", "size=65536k"));
        mount(mounts, "/dev/pts", "devpts", "devpts", List.of("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"));
        mount(mounts, "/dev/shm", "tmpfs", "shm", List.of("nosuid", "noexec", "nodev", "mode=1777", "size=65536k"));
        mount(mounts, "/dev/mqueue", "mqueue", "mqueue", List.of("nosuid", "noexec", "nodev"));
        mount(mounts, "/sys", "sysfs", "sysfs", List.of("nosuid", "noexec", "nodev", "ro"));
        mount(mounts, "/sys/fs/cgroup", "cgroup", "cgroup", List.of("nosuid", "noexec", "nodev", "relatime", "ro"));
        mount(mounts, INIT_DIR, "bind", initDir.toString(), List.of("rbind", "ro", "nosuid", "nodev"));

        ObjectNode linux = spec.putObject("linux");
        ArrayNode namespaces = linux.putArray("namespaces");
        // No path for the network namespace: runc creates it, owned by the sandbox's user namespace,
        // which both `runc exec` and a CRIU dump need (docs/HOST.md).
        for (String ns : List.of("pid", "ipc", "uts", "mount", "user", "network", "cgroup"))
            namespaces.addObject().put("type", ns);
        for (String map : List.of("uidMappings", "gidMappings"))
            linux.putArray(map).addObject().put("containerID", 0).put("hostID", idMapBase).put("size", RuncConfig.ID_MAP_SIZE);
        linux.put("cgroupsPath", cgroupPath);

        setResources(spec, resources);

        ArrayNode masked = linux.putArray("maskedPaths");
        MASKED_PATHS.forEach(masked::add);
        ArrayNode readonly = linux.putArray("readonlyPaths");
        READONLY_PATHS.forEach(readonly::add);
        linux.set("seccomp", SeccompProfile.build(json));
        // runc hands this file to CRIU on checkpoint and restore (see CriuConfigFile).
        spec.putObject("annotations").put("org.criu.config", criuConfig.toString());
        return spec;
    }

    /** Adds {@code argv} as a prestart hook: runc runs it with the container's state on stdin (in a restore, once CRIU has made the namespaces). */
    static void addPrestartHook(ObjectNode spec, List<String> argv) {
        ObjectNode hook = ((ObjectNode) spec.with("hooks")).withArray("prestart").addObject();
        hook.put("path", argv.getFirst());
        var args = hook.putArray("args");
        argv.forEach(args::add);
    }

    /** Sets the cgroup limits (and the deny-all device rule) in a spec built by {@link #build}. */
    static void setResources(ObjectNode spec, Resources resources) {
        ObjectNode res = ((ObjectNode) spec.get("linux")).putObject("resources");
        res.putArray("devices").addObject().put("allow", false).put("access", "rwm");
        // swap: the memory+swap limit (v1 memsw), the same as the memory limit, so that a sandbox never
        // swaps by itself (a full one is OOM-killed as without swap); only standby pages it out.
        long memory = (long) resources.memoryMb() * 1024 * 1024;
        var limits = res.putObject("memory").put("limit", memory);
        if (SWAP_ACCOUNTING) limits.put("swap", memory);
        res.putObject("cpu").put("quota", Math.round(resources.cpus() * CPU_PERIOD_US)).put("period", CPU_PERIOD_US);
        res.putObject("pids").put("limit", resources.pids());
    }

    /**
     * Gives a spec built by {@link #build} the CPU weight of a sandbox started ahead of demand
     * ({@link CgroupLimits#BACKGROUND_SHARES}); runc and runsc write it to the sandbox's cgroup
     * (as {@code cpu.weight} under cgroup v2).
     */
    static void runInBackground(ObjectNode spec) {
        ((ObjectNode) spec.get("linux").get("resources").get("cpu")).put("shares", CgroupLimits.BACKGROUND_SHARES);
    }

    /** Adds a read-only bind mount of a host file or directory to a spec built by {@link #build}. */
    static void bindReadOnly(ObjectNode spec, String destination, Path source) {
        mount((ArrayNode) spec.get("mounts"), destination, "bind", source.toString(), List.of("bind", "ro", "nosuid", "nodev", "noexec"));
    }

    /**
     * Adds a volume: a bind mount of a host directory, read-write or read-only, without setuid or
     * device files. runc hands bind mounts to CRIU as external mounts on checkpoint and restore,
     * so a hibernated or forked sandbox gets the same directory back.
     */
    static void bindVolume(ObjectNode spec, String destination, Path source, boolean readOnly) {
        mount((ArrayNode) spec.get("mounts"), destination, "bind", source.toString(),
                List.of("rbind", readOnly ? "ro" : "rw", "nosuid", "nodev"));
    }

    private static void mount(ArrayNode mounts, String destination, String type, String source, List<String> options) {
        ObjectNode m = mounts.addObject();
        m.put("destination", destination);
        m.put("type", type);
        m.put("source", source);
        ArrayNode opts = m.putArray("options");
        options.forEach(opts::add);
    }
}

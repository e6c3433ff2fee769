package io.stasis.storage.btrfs;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.StreamReader;
import io.stasis.host.MountInfo;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs the {@code btrfs} and {@code mkfs.btrfs} binaries (btrfs-progs). It is
 * the reference implementation of {@link Subvolumes}, and the only way to make a filesystem, read
 * or set the read-only property and list subvolumes.
 */
public final class Btrfs implements Subvolumes, Qgroups {
    private static final Logger log = LoggerFactory.getLogger(Btrfs.class);
    private static final Pattern VERSION = Pattern.compile("btrfs-progs v(\\d+)\\.(\\d+)");
    private static final Pattern UUID = Pattern.compile("uuid: ([0-9a-f-]{36})");
    private static final Pattern QGROUP = Pattern.compile("\\d+/\\d+");
    /** How long one send or receive may take: a stream of a large root or volume, through a slow store. */
    private static final Duration STREAM_LIMIT = Duration.ofHours(2);

    private final Path btrfs;
    private final Path mkfs;
    private final Duration timeout;

    Btrfs(Path btrfs, Path mkfs, Duration timeout) {
        this.btrfs = btrfs;
        this.mkfs = mkfs;
        this.timeout = timeout;
    }

    /** The tools found in PATH or the system directories, 60 s per call (a mkfs of a sparse image takes ~30 ms). */
    public static Btrfs fromSystem() {
        return new Btrfs(ToolRunner.locate("btrfs"), ToolRunner.locate("mkfs.btrfs"), Duration.ofSeconds(60));
    }

    /** The btrfs-progs version, e.g. {@code 6.2}; fails with {@code runtime_failed} if the tools are missing. */
    public String version() {
        var result = run("btrfs version", List.of(btrfs.toString(), "--version"));
        var m = VERSION.matcher(result.stdoutText());
        if (!m.find()) throw failure("btrfs version", "unexpected output: " + ToolRunner.tail(result.stdout()), null, null);
        return m.group(1) + "." + m.group(2);
    }

    /** Formats {@code device} (an image file or block device) as btrfs, overwriting whatever is there. */
    void mkfs(Path device, String label) {
        run("mkfs.btrfs", List.of(mkfs.toString(), "--quiet", "--force", "--label", label, device.toString()));
    }

    @Override
    public void create(Path path) {
        run("btrfs subvolume create", List.of(btrfs.toString(), "subvolume", "create", path.toString()));
    }

    @Override
    public void snapshot(Path source, Path target, boolean readOnly) {
        var argv = new ArrayList<>(List.of(btrfs.toString(), "subvolume", "snapshot"));
        if (readOnly) argv.add("-r");
        argv.addAll(List.of(source.toString(), target.toString()));
        run("btrfs subvolume snapshot", argv);
    }

    @Override
    public void delete(Path path) {
        run("btrfs subvolume delete", List.of(btrfs.toString(), "subvolume", "delete", path.toString()));
    }

    @Override
    public String kind() {
        return "cli";
    }

    /**
     * Writes out the filesystem's dirty data and commits the transaction. A snapshot taken right
     * after large unsynced writes waits for that flush itself (500 MB dirty: ~0.5 s), so a fresh
     * template is synced once at install time rather than by the first sandbox made from it.
     */
    @Override
    public void sync(Path anyPath) {
        run("btrfs filesystem sync", List.of(btrfs.toString(), "filesystem", "sync", anyPath.toString()));
    }

    @Override
    public void enableQuotas(Path anyPath) {
        run("btrfs quota enable", List.of(btrfs.toString(), "quota", "enable", anyPath.toString()));
    }

    /** {@inheritDoc} <p>{@code btrfs quota enable --simple}: btrfs-progs 6.7 or later. */
    @Override
    public void enableSimpleQuotas(Path anyPath) {
        if (!canEnableSimpleQuotas())
            throw failure("btrfs quota enable --simple", "btrfs-progs " + version() + " cannot turn on simple quotas (6.7 or later can)", null, null);
        run("btrfs quota enable --simple", List.of(btrfs.toString(), "quota", "enable", "--simple", anyPath.toString()));
    }

    @Override
    public void disableQuotas(Path anyPath) {
        run("btrfs quota disable", List.of(btrfs.toString(), "quota", "disable", anyPath.toString()));
    }

    /** btrfs-progs 6.7 added {@code quota enable --simple}. */
    @Override
    public boolean canEnableSimpleQuotas() {
        String[] v = version().split("\\.");
        int major = Integer.parseInt(v[0]), minor = Integer.parseInt(v[1]);
        return major > 6 || (major == 6 && minor >= 7);
    }

    /**
     * {@inheritDoc}
     * <p>{@code btrfs inspect-internal rootid} for the qgroup id, then {@code btrfs qgroup limit}
     * twice (referenced, then {@code -e} exclusive) naming that qgroup from the parent directory.
     */
    @Override
    public void limit(Path subvolume, long bytes) {
        String step = "btrfs qgroup limit";
        if (bytes <= 0) throw failure(step, "the limit must be positive, was " + bytes, null, null);
        limit(subvolume.toAbsolutePath().getParent(), Qgroup.ofSubvolume(rootId(step, subvolume)), bytes);
    }

    @Override
    public long subvolumeId(Path subvolume) {
        return rootId("btrfs inspect-internal rootid", subvolume);
    }

    private long rootId(String step, Path subvolume) {
        return Long.parseLong(run(step, List.of(btrfs.toString(), "inspect-internal", "rootid", subvolume.toString())).stdoutText().strip());
    }

    @Override
    public void create(Path pool, Qgroup group) {
        runUnless("File exists", "btrfs qgroup create", List.of(btrfs.toString(), "qgroup", "create", group.toString(), pool.toString()));
    }

    @Override
    public void destroy(Path pool, Qgroup group) {
        runUnless("No such file", "btrfs qgroup destroy", List.of(btrfs.toString(), "qgroup", "destroy", group.toString(), pool.toString()));
    }

    /** {@inheritDoc} <p>{@code --no-rescan}: under full accounting the caller decides when to rescan. */
    @Override
    public void assign(Path pool, Qgroup member, Qgroup parent) {
        runUnless("File exists", "btrfs qgroup assign", List.of(btrfs.toString(), "qgroup", "assign", "--no-rescan", member.toString(),
                parent.toString(), pool.toString()));
    }

    @Override
    public void unassign(Path pool, Qgroup member, Qgroup parent) {
        runUnless("No such file", "btrfs qgroup remove", List.of(btrfs.toString(), "qgroup", "remove", "--no-rescan", member.toString(),
                parent.toString(), pool.toString()));
    }

    @Override
    public void limit(Path pool, Qgroup group, long bytes) {
        String step = "btrfs qgroup limit";
        if (bytes <= 0) throw failure(step, "the limit must be positive, was " + bytes, null, null);
        run(step, List.of(btrfs.toString(), "qgroup", "limit", Long.toString(bytes), group.toString(), pool.toString()));
        run(step, List.of(btrfs.toString(), "qgroup", "limit", "-e", Long.toString(bytes), group.toString(), pool.toString()));
    }

    /** {@inheritDoc} <p>The parent column of {@code btrfs qgroup show -p}: {@code -} or a comma-separated list. */
    @Override
    public Set<Membership> memberships(Path pool) {
        var found = new LinkedHashSet<Membership>();
        for (String line : run("btrfs qgroup show", List.of(btrfs.toString(), "qgroup", "show", "-p", "--raw", pool.toString())).stdout()) {
            String[] columns = line.strip().split("\\s+");
            if (columns.length < 4 || !QGROUP.matcher(columns[0]).matches()) continue;
            for (String parent : columns[3].split(","))
                if (QGROUP.matcher(parent).matches()) found.add(new Membership(Qgroup.parse(columns[0]), Qgroup.parse(parent)));
        }
        return found;
    }

    /**
     * The filesystem's UUID from {@code btrfs filesystem show} of the mount point holding
     * {@code anyPath} (it accepts mount points and devices, not directories below them). Empty
     * if that cannot be told.
     */
    @Override
    public Optional<String> filesystemId(Path anyPath) {
        try {
            var mount = MountInfo.read().containing(anyPath.toRealPath());
            if (mount.isEmpty() || !mount.get().fsType().equals("btrfs")) return Optional.empty();
            var m = UUID.matcher(run("btrfs filesystem show", List.of(btrfs.toString(), "filesystem", "show",
                    mount.get().mountPoint().toString())).stdoutText());
            return m.find() ? Optional.of(m.group(1)) : Optional.empty();
        } catch (IOException | StasisException e) {
            log.atDebug().addKeyValue("path", anyPath).setCause(e).log("filesystem id unknown");
            return Optional.empty();
        }
    }

    /**
     * How the filesystem holding {@code anyPath} accounts quotas, as the kernel reports it:
     * {@code squota} (simple quotas), {@code qgroup} (full accounting), {@code off}, or
     * {@code unknown} if that cannot be read. For reports (the benchmark records it).
     */
    public String quotaMode(Path anyPath) {
        var fsid = filesystemId(anyPath);
        if (fsid.isEmpty()) return "unknown";
        return QuotaState.read(QuotaState.SYSFS, fsid.get()).map(QuotaState::mode).orElse("off");
    }

    /** Sets or clears the read-only flag of a subvolume. */
    void setReadOnly(Path subvolume, boolean readOnly) {
        run("btrfs property set ro", List.of(btrfs.toString(), "property", "set", "-ts", subvolume.toString(),
                "ro", Boolean.toString(readOnly)));
    }

    boolean isReadOnly(Path subvolume) {
        String out = run("btrfs property get ro", List.of(btrfs.toString(), "property", "get", "-ts", subvolume.toString(), "ro")).stdoutText();
        return out.strip().equals("ro=true");
    }

    /**
     * Paths, relative to the filesystem's top level, of every subvolume on the filesystem holding
     * {@code anyPath}; subvolumes deleted but not yet cleaned up are not listed.
     */
    List<String> listSubvolumes(Path anyPath) {
        List<String> out = run("btrfs subvolume list", List.of(btrfs.toString(), "subvolume", "list", anyPath.toString())).stdout();
        var paths = new ArrayList<String>();
        for (String line : out) {
            int at = line.indexOf(" path ");
            if (at >= 0) paths.add(line.substring(at + " path ".length()).strip());
        }
        return paths;
    }

    /**
     * Runs {@code btrfs send} on a read-only snapshot, with {@code -p parent} for an incremental
     * stream (only what changed since {@code parent}, which must be read-only too and on the same
     * filesystem), and hands the stream to {@code reader} as it is produced. Returns what the
     * reader returned once the tool has exited successfully; fails with {@code runtime_failed}
     * (the tool's stderr tail) otherwise. The tool never outlives the call.
     */
    public <R> R send(Path snapshot, Optional<Path> parent, StreamReader<R> reader) {
        return send(snapshot, parent, p -> { }, reader);
    }

    /** As {@link #send(Path, java.util.Optional, io.stasis.core.spi.StreamReader)}, handing the started tool to {@code started} (to abort it). */
    <R> R send(Path snapshot, Optional<Path> parent, Consumer<Process> started, StreamReader<R> reader) {
        var argv = new ArrayList<>(List.of(btrfs.toString(), "send", "-q"));
        parent.ifPresent(p -> argv.addAll(List.of("-p", p.toString())));
        argv.add(snapshot.toString());
        return streaming("btrfs send", argv, STREAM_LIMIT, false, process -> {
            started.accept(process);
            try (var in = process.getInputStream()) {
                return reader.read(in);
            }
        });
    }

    /**
     * Runs {@code btrfs receive} into {@code directory}, feeding it {@code stream}: the subvolume
     * the stream describes appears there under its sent name, read-only once complete. An
     * incremental stream needs its parent (found by UUID anywhere on the filesystem). On failure:
     * {@code runtime_failed}; a half-received subvolume may be left for the caller to remove.
     */
    public void receive(Path directory, InputStream stream) {
        var argv = List.of(btrfs.toString(), "receive", directory.toString());
        streaming("btrfs receive", argv, STREAM_LIMIT, true, process -> {
            // A failed read of the source, or the tool stopping early (broken pipe, its stderr says why), fails the call.
            try (var out = process.getOutputStream()) {
                stream.transferTo(out);
            }
            return null;
        });
    }

    /** Runs a tool whose stdin ({@code feedsStdin}) or stdout the caller streams (see {@link ToolRunner#stream}). */
    private <R> R streaming(String step, List<String> argv, Duration limit, boolean feedsStdin, ToolRunner.StreamBody<R> body) {
        try {
            var streamed = ToolRunner.stream(argv, limit, feedsStdin, body);
            if (streamed.result().exitCode() != 0)
                throw failure(step, "exit " + streamed.result().exitCode() + ": " + streamed.result().stderrTail(), streamed.result(), null);
            log.atDebug().addKeyValue("step", step).addKeyValue("ms", streamed.result().millis()).addKeyValue("argv", argv).log("btrfs ok");
            return streamed.value();
        } catch (ToolRunner.StreamFailed e) {
            throw failure(step, e.getMessage(), null, e);
        } catch (IOException e) {
            throw failure(step, "could not start " + argv.getFirst() + " (is btrfs-progs installed?): " + e.getMessage(), null, e);
        } catch (ToolRunner.TimedOut e) {
            throw failure(step, e.getMessage(), null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(step, "interrupted", null, e);
        }
    }

    private ToolRunner.Result run(String step, List<String> argv) {
        return runUnless(null, step, argv);
    }

    /** Runs a tool; a failure whose stderr says {@code done} (if not null) means there was nothing to do. */
    private ToolRunner.Result runUnless(String done, String step, List<String> argv) {
        try {
            var result = ToolRunner.run(argv, timeout);
            if (result.exitCode() != 0 && (done == null || !result.stderrTail().contains(done)))
                throw failure(step, "exit " + result.exitCode() + ": " + result.stderrTail(), result, null);
            log.atDebug().addKeyValue("step", step).addKeyValue("ms", result.millis()).addKeyValue("argv", argv).log("btrfs ok");
            return result;
        } catch (IOException e) {
            throw failure(step, "could not start " + argv.getFirst() + " (is btrfs-progs installed?): " + e.getMessage(), null, e);
        } catch (ToolRunner.TimedOut e) {
            throw failure(step, e.getMessage(), null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(step, "interrupted", null, e);
        }
    }

    private static StasisException failure(String step, String problem, ToolRunner.Result result, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        if (result != null) {
            details.put("exitCode", result.exitCode());
            details.put("stderr", result.stderrTail());
        }
        log.atWarn().addKeyValue("step", step).log(problem);
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed: " + problem, details, cause);
    }
}

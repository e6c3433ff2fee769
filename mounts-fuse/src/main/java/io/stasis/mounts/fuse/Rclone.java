package io.stasis.mounts.fuse;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BucketMount;
import io.stasis.host.HelperFiles;
import io.stasis.host.MountInfo;
import io.stasis.host.ToolRunner;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs {@code rclone} (Debian's {@code rclone} package; {@code fuse3} provides
 * the {@code fusermount3} it calls). It owns the flags, the per-mount config file, the log, the
 * way to recognise its daemons and to read what they have not uploaded yet, and the errors.
 *
 * <p><b>Why rclone and not s3fs.</b> Both are in bookworm (rclone 1.60.1, s3fs 1.90). rclone wins on
 * the points that matter for a sandbox's bucket:
 * <ul>
 *   <li><b>Lazy reads</b>: with {@code --vfs-cache-mode full} it fetches only the ranges read, as
 *       {@code Range} requests of {@code --vfs-read-chunk-size} (doubling on sequential reads up to
 *       a limit), into a sparse on-disk cache. s3fs also reads ranges, but without its cache it
 *       re-reads, and with it ({@code use_cache}) the cache is unbounded.</li>
 *   <li><b>Disk and memory bounded</b>: {@code --vfs-cache-max-size} / {@code --vfs-cache-max-age}
 *       evict least recently used data; {@code --buffer-size} bounds memory per open file.</li>
 *   <li><b>Write-back</b>: a closed file is uploaded after {@code --vfs-write-back}; random writes
 *       and read-write opens work (the file is assembled in the cache). Pending uploads are kept in
 *       the cache directory with a {@code Dirty} mark and are uploaded by the next rclone started
 *       on the same cache: a killed daemon loses only what was not yet closed and queued (a few ms
 *       after the close; the mark is rewritten in place, so a kill during that rewrite loses it).
 *       s3fs uploads on close (stronger, but a close blocks for the whole upload), and a crash
 *       loses what it had staged.</li>
 *   <li><b>Credentials</b>: read from a config file given by {@code --config} (0600, in a 0700
 *       directory, deleted as soon as the mount is up: rclone keeps the remote in memory), never
 *       on the command line, where any user could read them in {@code /proc/PID/cmdline}. The
 *       daemon's environment is built from scratch, so nothing of the service's (e.g.
 *       {@code AWS_*} variables, which break rclone 1.60's S3 client) leaks in.</li>
 *   <li><b>Endpoint down</b>: requests fail after {@code --contimeout}/{@code --timeout} and 3
 *       {@code --low-level-retries}; an uncached read gives {@code EIO} once the cache's downloader
 *       has failed 10 times, about 40-60 s (not configurable in 1.60; one low-level try instead of 3
 *       only cut it to ~40 s, so transient errors keep their retries). The mount stays and works
 *       again when the endpoint is back; cached data stays readable; pending uploads are retried
 *       with growing backoff. s3fs behaves alike for reads but checks the bucket at start and
 *       does not start at all while it is unreachable (here the first listing fails the mount
 *       too, with the reason, on purpose).</li>
 *   <li><b>Clean unmount</b>: the daemon ends when its mount is unmounted (also lazily, when the
 *       last open file closes).</li>
 * </ul>
 * What rclone does not do: POSIX locks across hosts, hard links, symlinks (without
 * {@code --links}, not in 1.60's mount), atomic directory renames. Those are the bucket's limits.
 *
 * <p><b>Process.</b> Each daemon runs as {@code setsid stasis-pin ... rclone mount} in its own
 * session (a signal to the service's process group does not reach it), with the mount's private
 * directory as its working directory: that is how {@link #daemonIn(Path)} finds it again after a
 * restart, even when its mount is gone. stdin is {@code /dev/null}; stdout and stderr go to
 * {@code rclone.out}, the log to {@code rclone.log}, both in the private directory, and errors
 * quote their tails.
 *
 * <p><b>Pinned endpoint.</b> rclone connects only through {@code stasis-pin} (src/main/c), its
 * parent: a SOCKS5 proxy on loopback that reaches the endpoint's host at
 * {@link BucketMount#addresses()} (the addresses the service checked) and refuses any other
 * target. rclone never resolves the endpoint's name, so DNS rebinding after the check reaches
 * nothing new. The pin lives as long as its rclone and takes it along if it dies (a daemon without
 * its pin would connect unchecked). An endpoint on a loopback address is the one exception: Go's
 * HTTP client never proxies those, and an address literal needs no pin.
 */
final class Rclone {
    private static final Logger log = LoggerFactory.getLogger(Rclone.class);
    /** The name of the remote in the config file. */
    static final String REMOTE = "stasis";
    /** The oldest rclone whose full cache mode keeps sparse files and resumes uploads (1.53), with margin. */
    static final int[] MIN_VERSION = {1, 55};
    static final String CONFIG_FILE = "rclone.conf";
    static final String LOG_FILE = "rclone.log";
    static final String OUT_FILE = "rclone.out";
    /** stderr of the bucket check before a mount. */
    static final String CHECK_FILE = "rclone-check.err";
    static final String CACHE_DIR = "cache";
    /** The fstype rclone's mounts have in /proc/self/mountinfo. */
    static final String FS_TYPE = "fuse.rclone";
    private static final Pattern VERSION = Pattern.compile("rclone v(\\d+)\\.(\\d+)\\.(\\d+)");
    private static final Pattern DIRTY = Pattern.compile("\"Dirty\"\\s*:\\s*true");
    private static final int TAIL_LINES = 20;
    /** The most addresses the pin takes (stasis-pin.c's MAX_ADDRESSES): a name with more is pinned to its first. */
    private static final int MAX_PINNED = 16;

    /** The pin, a static helper built from src/main/c and shipped beside this class. */
    static final String PIN = "stasis-pin";

    private final Path binary;
    private final Path setsid;
    private final Path pin;
    private final Duration commandTimeout;

    Rclone(Path binary, Path setsid, Path pin, Duration commandTimeout) {
        this.binary = binary;
        this.setsid = setsid;
        this.pin = pin;
        this.commandTimeout = commandTimeout;
    }

    /** The system's rclone, run under the pin installed into {@code helperDir}. */
    static Rclone fromSystem(Path helperDir) {
        return new Rclone(ToolRunner.locate("rclone"), ToolRunner.locate("setsid"), HelperFiles.install(Rclone.class, helperDir, PIN),
                Duration.ofSeconds(30));
    }

    /**
     * Checks that rclone runs and is recent enough, and that the kernel has FUSE; returns the
     * version (e.g. {@code 1.60.1}).
     */
    String checkVersion() {
        if (!Files.exists(Path.of("/dev/fuse")))
            throw failure("check", null, "/dev/fuse is missing: the kernel has no FUSE (modprobe fuse)", null, null);
        ToolRunner.Result result;
        try {
            result = ToolRunner.run(List.of(binary.toString(), "version"), commandTimeout);
        } catch (IOException e) {
            throw failure("check", null, "cannot run " + binary + " (apt-get install rclone fuse3): " + e.getMessage(), null, e);
        } catch (ToolRunner.TimedOut e) {
            throw failure("check", null, e.getMessage(), null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("check", null, "interrupted", null, e);
        }
        Matcher m = VERSION.matcher(result.stdoutText());
        if (result.exitCode() != 0 || !m.find())
            throw failure("check", null, "'rclone version' printed no version (exit " + result.exitCode() + ")", result.stderrTail(), null);
        int major = Integer.parseInt(m.group(1)), minor = Integer.parseInt(m.group(2));
        if (major < MIN_VERSION[0] || major == MIN_VERSION[0] && minor < MIN_VERSION[1])
            throw failure("check", null, "rclone " + m.group() + " is too old: " + MIN_VERSION[0] + "." + MIN_VERSION[1] + " or later is needed", null, null);
        return m.group(1) + "." + m.group(2) + "." + m.group(3);
    }

    /**
     * Starts {@code rclone mount} for {@code spec} at {@code mountPoint} and returns once the mount is
     * in the mount table and its first listing succeeded, or fails with no daemon left.
     * <p>Prerequisites: {@code privateDir} exists with mode 0700 and holds {@code mountPoint}, an empty
     * directory with nothing mounted on it; no daemon runs in {@code privateDir}.
     * <p>Effects on success: a daemon serves the mount; the config file is gone again.
     * <p>On failure: {@code runtime_failed} quoting the log's tail; no daemon, no mount, no config
     * file. The cache (pending uploads of an earlier daemon) is left alone.
     */
    ProcessHandle mount(BucketMount spec, Path privateDir, Path mountPoint, FuseBucketMounts.Options options, Optional<Path> cgroup) {
        Path config = privateDir.resolve(CONFIG_FILE);
        writeConfig(config, spec);
        Process process = null;
        boolean ok = false;
        try {
            var pin = pinned(spec); // once: the check and the daemon connect to the same addresses
            checkBucket(spec, pin, privateDir, options, cgroup);
            var builder = cleanBuilder(argv(spec, pin, privateDir, mountPoint, options), privateDir, cgroup)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(privateDir.resolve(OUT_FILE).toFile()))
                    .redirectErrorStream(true);
            try {
                process = builder.start();
            } catch (IOException e) {
                throw failure("mount", spec, "cannot start " + binary + ": " + e.getMessage(), null, e);
            }
            awaitMounted(spec, process, privateDir, mountPoint, options.mountTimeout());
            probe(spec, process, privateDir, mountPoint, options.mountTimeout());
            ok = true;
            log.atInfo().addKeyValue("mount", spec.id()).addKeyValue("bucket", spec.bucketPath()).addKeyValue("endpoint", spec.endpoint())
                    .addKeyValue("readOnly", spec.readOnly()).addKeyValue("pid", process.pid()).log("bucket mounted");
            return process.toHandle();
        } finally {
            deleteQuietly(config);
            if (!ok && process != null) stopAfterFailure(process, mountPoint);
        }
    }

    /**
     * A command run in {@code privateDir} with an environment of its own: nothing of the service's
     * (no AWS_* or RCLONE_* surprises); with {@code cgroup}, the pin moves into it before it starts rclone.
     */
    private static ProcessBuilder cleanBuilder(List<String> argv, Path privateDir, Optional<Path> cgroup) {
        var builder = new ProcessBuilder(argv).directory(privateDir.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        var env = builder.environment();
        env.clear();
        env.put("PATH", String.join(File.pathSeparator, ToolRunner.SYSTEM_DIRS.stream().map(Path::toString).toList()));
        env.put("HOME", privateDir.toString());
        env.put("LC_ALL", "C");
        cgroup.ifPresent(procs -> env.put("STASIS_PIN_CGROUP", procs.toString()));
        return builder;
    }

    /**
     * Fails unless the bucket exists and the key may list it. {@code rclone mount} shows a missing
     * bucket as an empty directory (its VFS takes "directory not found" for empty), which would
     * turn a typo into writes that fail later: {@code rclone lsf} of the bucket's root says exit 3
     * instead. One key per page, and the first line of output is enough: a bucket of millions of
     * keys is not listed.
     */
    private void checkBucket(BucketMount spec, List<String> pin, Path privateDir, FuseBucketMounts.Options o, Optional<Path> cgroup) {
        var argv = new ArrayList<>(pin);
        argv.addAll(List.of(binary.toString(), "lsf", REMOTE + ":" + spec.bucket(), "--config", privateDir.resolve(CONFIG_FILE).toString(),
                "--max-depth", "1", "--s3-list-chunk", "1", "--low-level-retries", "1", "--retries", "1",
                "--contimeout", millis(o.connectTimeout()), "--timeout", millis(o.ioTimeout())));
        Path err = privateDir.resolve(CHECK_FILE);
        Process process;
        try {
            process = cleanBuilder(argv, privateDir, cgroup).redirectError(ProcessBuilder.Redirect.to(err.toFile())).start();
        } catch (IOException e) {
            throw failure("check bucket", spec, "cannot start " + binary + ": " + e.getMessage(), null, e);
        }
        try (var out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            var firstLine = CompletableFuture.supplyAsync(() -> {
                try {
                    return Optional.ofNullable(out.readLine());
                } catch (IOException e) {
                    return Optional.<String>empty();
                }
            }, runnable -> Thread.ofVirtual().start(runnable));
            Optional<String> line = firstLine.get(o.mountTimeout().toMillis(), TimeUnit.MILLISECONDS);
            if (line.isPresent()) return; // it lists: the bucket exists
            if (!process.waitFor(o.mountTimeout().toMillis(), TimeUnit.MILLISECONDS))
                throw failure("check bucket", spec, "listing the bucket took longer than " + o.mountTimeout().toSeconds() + " s", null, null);
            if (process.exitValue() != 0)
                throw failure("check bucket", spec, process.exitValue() == 3 ? "no such bucket (or the key may not list it)"
                        : "listing the bucket failed (exit " + process.exitValue() + ")", tail(err), null);
        } catch (TimeoutException e) {
            throw failure("check bucket", spec, "listing the bucket took longer than " + o.mountTimeout().toSeconds() + " s", tail(err), e);
        } catch (ExecutionException | IOException e) {
            throw failure("check bucket", spec, "cannot read rclone's listing: " + e.getMessage(), tail(err), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("check bucket", spec, "interrupted", null, e);
        } finally {
            process.destroyForcibly(); // done with it either way; a listing still paging is not needed
            deleteQuietly(err);
        }
    }

    /** The mount's flags, after {@code pin} ({@link #pinned}). Every path is absolute; nothing secret is on it. */
    private List<String> argv(BucketMount spec, List<String> pin, Path privateDir, Path mountPoint, FuseBucketMounts.Options o) {
        var argv = new ArrayList<>(List.of(setsid.toString()));
        argv.addAll(pin);
        argv.addAll(List.of(binary.toString(), "mount", REMOTE + ":" + spec.bucketPath(),
                mountPoint.toString(),
                "--config", privateDir.resolve(CONFIG_FILE).toString(),
                "--cache-dir", privateDir.resolve(CACHE_DIR).toString(),
                "--log-file", privateDir.resolve(LOG_FILE).toString(),
                "--log-level", "INFO",
                "--devname", "stasis-bucket:" + spec.id().value(), // the mount table's source: labelled as ours
                // lazy reads into a sparse, bounded disk cache; writes assembled there and uploaded after close
                "--vfs-cache-mode", "full",
                "--vfs-cache-max-size", Long.toString(o.cacheMaxBytes()),
                "--vfs-cache-max-age", seconds(o.cacheMaxAge()),
                "--vfs-cache-poll-interval", "30s",
                "--vfs-write-back", millis(o.writeBack()),
                "--vfs-read-chunk-size", Long.toString(o.readChunkBytes()),
                "--vfs-read-chunk-size-limit", Long.toString(o.readChunkBytes() * 16),
                "--vfs-read-ahead", "0",
                "--buffer-size", "1M", // memory per open file
                "--dir-cache-time", millis(o.dirCacheTime()),
                "--attr-timeout", "1s",
                "--use-server-modtime", // the listing's LastModified: no HEAD per file
                "--contimeout", millis(o.connectTimeout()),
                "--timeout", millis(o.ioTimeout()),
                "--low-level-retries", "3",
                // the sandbox's root owns the files; the kernel checks the modes, for other users too
                "--allow-other", "--default-permissions",
                "--uid", Integer.toString(o.owner().uid()), "--gid", Integer.toString(o.owner().gid()),
                "--umask", "0" + Integer.toOctalString(o.umask())));
        if (spec.readOnly()) argv.add("--read-only");
        return argv;
    }

    /**
     * The pin before rclone's own argv: the endpoint's host and port, and the addresses it may be
     * reached at ({@link BucketMount#addresses()}, else what the host resolves the name to now).
     */
    private List<String> pinned(BucketMount spec) {
        List<InetAddress> addresses = spec.addresses();
        if (addresses.isEmpty()) {
            try {
                addresses = List.of(InetAddress.getAllByName(spec.host()));
            } catch (UnknownHostException e) {
                throw failure("mount", spec, "the endpoint's host '" + spec.host() + "' does not resolve on this server", null, e);
            }
        }
        if (addresses.size() > MAX_PINNED) addresses = addresses.subList(0, MAX_PINNED);
        String list = String.join(",", addresses.stream().map(InetAddress::getHostAddress).toList());
        return List.of(pin.toString(), spec.host(), Integer.toString(spec.port()), list);
    }

    /**
     * The config file: the remote with its key, 0600 from the start (created with those
     * permissions, never widened). The values are checked by {@link BucketMount} to be printable
     * ASCII without line breaks, so they cannot add lines.
     */
    private static void writeConfig(Path config, BucketMount spec) {
        String text = "[" + REMOTE + "]\n"
                + "type = s3\n"
                + "provider = Other\n"
                + "env_auth = false\n"
                + "access_key_id = " + spec.credentials().accessKeyId() + "\n"
                + "secret_access_key = " + spec.credentials().secretAccessKey() + "\n"
                + "endpoint = " + spec.endpoint() + "\n"
                + "region = " + spec.region() + "\n"
                + "force_path_style = true\n"
                + "no_check_bucket = true\n";
        try {
            deleteQuietly(config);
            Files.createFile(config, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(config, text, StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (FileAlreadyExistsException e) {
            throw failure("mount", spec, "config file " + config + " appeared while writing it", null, e);
        } catch (IOException e) {
            deleteQuietly(config);
            throw failure("mount", spec, "cannot write " + config + ": " + e.getMessage(), null, e);
        }
    }

    /** Waits until the mount is in the mount table; fails fast if rclone exits. */
    private void awaitMounted(BucketMount spec, Process process, Path privateDir, Path mountPoint, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pauseMillis = 5;
        while (true) {
            if (isMounted(mountPoint)) return;
            if (!process.isAlive())
                throw failure("mount", spec, "rclone exited with " + process.exitValue() + " before the bucket was mounted", tails(privateDir), null);
            if (System.nanoTime() > deadline)
                throw failure("mount", spec, "not mounted within " + timeout.toSeconds() + " s", tails(privateDir), null);
            try {
                process.waitFor(pauseMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure("mount", spec, "interrupted", null, e);
            }
            pauseMillis = Math.min(pauseMillis * 2, 100);
        }
    }

    /**
     * Lists the mount's root once, so that a wrong endpoint, key or bucket fails the mount now with
     * rclone's reason instead of every later access with {@code EIO}.
     */
    private void probe(BucketMount spec, Process process, Path privateDir, Path mountPoint, Duration timeout) {
        var listing = Thread.ofVirtual().name("bucket-probe-" + spec.id()).unstarted(() -> {
            try (Stream<Path> entries = Files.list(mountPoint)) {
                entries.findFirst();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        var error = new Throwable[1];
        listing.setUncaughtExceptionHandler((t, e) -> error[0] = e);
        listing.start();
        try {
            if (!listing.join(timeout))
                throw failure("mount", spec, "listing the bucket took longer than " + timeout.toSeconds() + " s", tails(privateDir), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("mount", spec, "interrupted", null, e);
        }
        if (error[0] != null)
            throw failure("mount", spec, "listing the bucket failed (" + error[0].getMessage() + ")", tails(privateDir), error[0]);
        if (!process.isAlive())
            throw failure("mount", spec, "rclone exited with " + process.exitValue() + " after mounting", tails(privateDir), null);
    }

    /** A failed start: detach whatever got mounted and end the daemon, so nothing is left. */
    private void stopAfterFailure(Process process, Path mountPoint) {
        process.destroy(); // SIGTERM: rclone unmounts on its way out
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        if (isMounted(mountPoint)) {
            try {
                ToolRunner.run(List.of(ToolRunner.locate("umount").toString(), "--lazy", mountPoint.toString()), commandTimeout);
            } catch (IOException | ToolRunner.TimedOut e) {
                log.atWarn().addKeyValue("mount", mountPoint).setCause(e).log("could not detach a failed bucket mount");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether an rclone FUSE mount is at {@code mountPoint}, as the mount table says (nothing is accessed). */
    static boolean isMounted(Path mountPoint) {
        return MountInfo.read().at(mountPoint).filter(e -> e.fsType().equals(FS_TYPE)).isPresent();
    }

    /**
     * The rclone daemon whose working directory is {@code privateDir}, alive, whether its mount is
     * there or not. Found through {@code /proc/PID/cwd}, which follows the directory and not a name on
     * a command line.
     */
    Optional<ProcessHandle> daemonIn(Path privateDir) {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                try {
                    if (!Files.readString(proc.resolve("comm")).strip().equals("rclone")) continue;
                    if (!Files.readSymbolicLink(proc.resolve("cwd")).equals(privateDir)) continue;
                    var handle = ProcessHandle.of(Long.parseLong(proc.getFileName().toString()));
                    if (handle.isPresent() && handle.get().isAlive()) return handle;
                } catch (IOException | SecurityException gone) {
                    // exited meanwhile, or a kernel thread without cwd
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list /proc", e);
        }
        return Optional.empty();
    }

    /**
     * Files written through the mount and not uploaded yet: the cache entries rclone marks dirty.
     * Read from disk, so it works for a dead daemon too.
     */
    static int pendingUploads(Path privateDir) {
        Path meta = privateDir.resolve(CACHE_DIR).resolve("vfsMeta");
        if (!Files.isDirectory(meta)) return 0;
        int dirty = 0;
        try (Stream<Path> files = Files.walk(meta)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                try {
                    if (DIRTY.matcher(Files.readString(file)).find()) dirty++;
                } catch (NoSuchFileException gone) {
                    // uploaded and cleaned meanwhile
                }
            }
        } catch (IOException | UncheckedIOException e) {
            log.atWarn().addKeyValue("cache", meta).setCause(e).log("cannot read rclone's cache metadata");
        }
        return dirty;
    }

    /** Waits up to {@code timeout} for the daemon to end; then SIGTERM, then SIGKILL. Returns whether it had to be killed. */
    static boolean awaitExit(ProcessHandle daemon, Duration timeout) {
        if (waitFor(daemon, timeout)) return false;
        daemon.destroy();
        if (waitFor(daemon, Duration.ofSeconds(5))) return true;
        daemon.destroyForcibly();
        waitFor(daemon, Duration.ofSeconds(5));
        return true;
    }

    private static boolean waitFor(ProcessHandle daemon, Duration timeout) {
        try {
            daemon.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return !daemon.isAlive();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !daemon.isAlive();
        }
    }

    /** The last lines of the log and of stdout/stderr, for error messages. */
    static String tails(Path privateDir) {
        var parts = new ArrayList<String>();
        for (String name : List.of(LOG_FILE, OUT_FILE)) {
            String tail = tail(privateDir.resolve(name));
            if (!tail.isEmpty()) parts.add(name + ": " + tail);
        }
        return String.join("\n", parts);
    }

    private static String tail(Path file) {
        try {
            var lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return ToolRunner.tail(lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.atWarn().addKeyValue("file", file).setCause(e).log("cannot delete");
        }
    }

    private static String millis(Duration d) {
        return d.toMillis() + "ms";
    }

    private static String seconds(Duration d) {
        return d.toSeconds() + "s";
    }

    static StasisException failure(String step, BucketMount spec, String problem, String tail, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", "rclone " + step);
        if (spec != null) {
            details.put("mount", spec.id().value());
            details.put("bucket", spec.bucketPath());
            details.put("endpoint", spec.endpoint().toString());
        }
        if (tail != null && !tail.isEmpty()) details.put("stderr", tail);
        String what = spec == null ? "" : " of bucket " + spec.bucketPath() + " at " + spec.endpoint() + " (mount " + spec.id() + ")";
        return new StasisException(ErrorCode.RUNTIME_FAILED,
                "rclone " + step + what + " failed: " + problem + (tail == null || tail.isEmpty() ? "" : "; " + tail), details, cause);
    }
}

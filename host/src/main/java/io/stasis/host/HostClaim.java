package io.stasis.host;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * A host-wide name that one process at a time may use (a service's nftables table, its interface
 * prefix, its address range, its NFLOG group): an flock on {@code <dir>/<kind>-<value>.lock},
 * held until closed or until the process ends however it ends, so a crashed holder never blocks
 * the next one. The file says who holds it, for the refusal of the next one.
 */
public final class HostClaim implements AutoCloseable {
    /**
     * Where the host-wide names are claimed: by every running service, and by the tests' own hosts
     * (gone with a reboot, like the claims).
     */
    public static final Path HOST_DIR = Path.of("/run/stasis/claims");
    private static final Pattern UNSAFE = Pattern.compile("[^A-Za-z0-9._-]");

    /**
     * The lock files this process holds, with their holders. The locks are POSIX record locks,
     * which belong to the process: closing any descriptor of a locked file, even one opened only to
     * find it locked, drops the process's lock. So a file held here is never opened again until
     * its claim is closed.
     */
    private static final Map<Path, String> HELD = new ConcurrentHashMap<>();

    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;

    private HostClaim(Path file, FileChannel channel, FileLock lock) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Claims {@code kind}/{@code value} for {@code holder} (written into the lock file), or returns
     * who holds it now. A claim this process holds already counts as held by another: each name is
     * claimed once per service.
     */
    public static Result take(Path dir, String kind, String value, String holder) {
        return take(dir.resolve(UNSAFE.matcher(kind + "-" + value).replaceAll("_") + ".lock"), holder);
    }

    /**
     * Whether no process (this one included) claims {@code kind}/{@code value} now: it is taken for
     * an instant and given back, for a caller choosing names a start will claim.
     */
    public static boolean isFree(Path dir, String kind, String value) {
        return switch (take(dir, kind, value, "a process looking for free names (pid " + ProcessHandle.current().pid() + ")")) {
            case Result.Claimed claimed -> {
                claimed.claim().close();
                yield true;
            }
            case Result.Taken taken -> false;
        };
    }

    /** The same for a lock file of the caller's naming (a data directory's own lock). */
    public static Result take(Path lockFile, String holder) {
        Path file = lockFile.toAbsolutePath().normalize();
        String ours = HELD.putIfAbsent(file, holder);
        if (ours != null) return new Result.Taken(ours);
        FileChannel channel = null;
        boolean claimed = false;
        try {
            Files.createDirectories(file.getParent());
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                String other = Files.readString(file, StandardCharsets.UTF_8).strip();
                channel.close();
                return new Result.Taken(other.isEmpty() ? "another process" : other);
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((holder + "\n").getBytes(StandardCharsets.UTF_8)), 0);
            claimed = true;
            return new Result.Claimed(new HostClaim(file, channel, lock));
        } catch (IOException e) {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw new UncheckedIOException("claiming " + file, e);
        } finally {
            if (!claimed) HELD.remove(file);
        }
    }

    /** A claim's outcome. */
    public sealed interface Result {
        record Claimed(HostClaim claim) implements Result {
        }

        record Taken(String holder) implements Result {
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            HELD.remove(file);
        }
    }
}

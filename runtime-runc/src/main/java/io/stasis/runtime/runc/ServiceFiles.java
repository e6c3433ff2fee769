package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.Errno;
import io.stasis.fs.linux.LinuxException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.OptionalInt;

/** The service's own small files in a sandbox's root, under {@code /.stasis}: the boot id and the instance file. */
final class ServiceFiles {
    /** Where a sandbox finds a fresh value after every restore, to reseed what it keeps in memory. */
    static final String INSTANCE_FILE = "/.stasis/instance";
    static final String BOOT_FILE = "/.stasis/boot";

    private final FileOwner rootOwner;

    ServiceFiles(FileOwner rootOwner) {
        this.rootOwner = rootOwner;
    }

    /**
     * Each fresh start of a sandbox (not a restore) gets a new boot id: background processes of an
     * earlier boot that never wrote an exit status did not end, they were lost with that boot.
     */
    void writeBoot(SandboxId id, Path root) {
        writeServiceFile(id, root, BOOT_FILE, Ids.randomSuffix().getBytes(StandardCharsets.US_ASCII));
    }

    /** The boot id of the root's sandbox, empty if it has none. */
    static String currentBoot(ConfinedRoot confined) {
        if (confined.sizeOf(BOOT_FILE) < 0) return "";
        return new String(confined.readAt(BOOT_FILE, 0, 64), StandardCharsets.US_ASCII).strip();
    }

    /**
     * A restored copy shares its parent's memory, random generators included. The kernel's
     * generator (getrandom, /dev/urandom) is not in the image and differs per copy; for what lives
     * in process memory, the sandbox finds a fresh value in {@value #INSTANCE_FILE} after every
     * restore, which processes that care re-read and reseed from (see docs/SECURITY.md).
     */
    void writeInstance(RuntimeSpec spec, CheckpointId image) {
        byte[] seed = new byte[32];
        new SecureRandom().nextBytes(seed);
        String text = "sandbox=" + spec.id() + "\ncheckpoint=" + image + "\nseed=" + HexFormat.of().formatHex(seed) + "\n";
        writeServiceFile(spec.id(), spec.root(), INSTANCE_FILE, text.getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Writes one of the service's own small files into a root. Even a file btrfs would keep
     * inline needs room for its data when written: on a full disk this fails, and says which.
     */
    private void writeServiceFile(SandboxId id, Path root, String file, byte[] content) {
        try (var confined = ConfinedRoot.open(root, rootOwner)) {
            writeOwnFile(confined, file, content, 0644);
        } catch (LinuxException e) {
            String step = "write " + file;
            if (e.errno() == Errno.EDQUOT) throw DiskFull.inSandbox(id, step, e.errnoName(), e);
            if (e.errno() == Errno.ENOSPC) throw DiskFull.inPool(id, step, e);
            throw StasisException.runtimeFailed(id.value(), step, e.getMessage(), e);
        }
    }

    /**
     * Writes one of the service's own small files into a root, without fsync: the host's
     * bookkeeping in a root goes with the sandbox's processes if the host dies, and an fsync costs
     * milliseconds on btrfs.
     */
    static void writeOwnFile(ConfinedRoot confined, String path, byte[] content, int mode) {
        try {
            confined.writeFile(path, new ByteArrayInputStream(content), OptionalInt.of(mode), false);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // cannot happen: the content is in memory
        }
    }
}

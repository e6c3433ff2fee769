package io.stasis.fs.linux;

import static io.stasis.fs.linux.Syscalls.AT_FDCWD;
import static io.stasis.fs.linux.Syscalls.AT_SYMLINK_FOLLOW;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_CREAT;
import static io.stasis.fs.linux.Syscalls.O_EXCL;
import static io.stasis.fs.linux.Syscalls.O_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_TMPFILE;
import static io.stasis.fs.linux.Syscalls.O_WRONLY;

import java.security.SecureRandom;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The next version of a file, written beside the old one and renamed over it once complete.
 * Preferably an unnamed {@code O_TMPFILE} inode, which vanishes by itself if the upload fails or
 * the host crashes; where the filesystem has no {@code O_TMPFILE}, a hidden random name that
 * {@link #close()} removes unless committed.
 */
final class TempFile implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TempFile.class);
    private static final String PREFIX = ".stasis-upload-";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int NAME_ATTEMPTS = 16;

    private final Fd dir;
    private final Fd file;
    private String linkedName;
    private boolean committed;

    private TempFile(Fd dir, Fd file, String linkedName) {
        this.dir = dir;
        this.file = file;
        this.linkedName = linkedName;
    }

    /** A new empty file (mode 0600, owned by the caller) in {@code dir}, which stays owned by the caller. */
    static TempFile createIn(Fd dir) {
        try {
            int fd = Syscalls.openat2(dir.value(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600, Confinement.ONE_NAME);
            return new TempFile(dir, new Fd(fd), null);
        } catch (LinuxException e) {
            if (!e.is(Errno.EOPNOTSUPP) && !e.is(Errno.EISDIR)) throw e;
        }
        for (int attempt = 0; ; attempt++) {
            String name = randomName();
            try {
                int fd = Syscalls.openat2(dir.value(), name, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600,
                        Confinement.ONE_NAME);
                return new TempFile(dir, new Fd(fd), name);
            } catch (LinuxException e) {
                if (!e.is(Errno.EEXIST) || attempt >= NAME_ATTEMPTS) throw e;
            }
        }
    }

    int fd() {
        return file.value();
    }

    /** Gives the file {@code name} in its directory, replacing whatever was there (never following it). */
    void commitAs(String name) {
        if (linkedName == null) linkedName = linkIntoDirectory();
        Syscalls.renameat2(dir.value(), linkedName, dir.value(), name, 0);
        committed = true;
    }

    /** An O_TMPFILE inode gets a name through its /proc magic link (no CAP_DAC_READ_SEARCH needed). */
    private String linkIntoDirectory() {
        for (int attempt = 0; ; attempt++) {
            String name = randomName();
            try {
                Syscalls.linkat(AT_FDCWD, file.procPath(), dir.value(), name, AT_SYMLINK_FOLLOW);
                return name;
            } catch (LinuxException e) {
                if (!e.is(Errno.EEXIST) || attempt >= NAME_ATTEMPTS) throw e;
            }
        }
    }

    @Override
    public void close() {
        try {
            if (!committed && linkedName != null) Syscalls.unlinkat(dir.value(), linkedName, 0);
        } catch (LinuxException e) {
            log.atWarn().addKeyValue("name", linkedName).addKeyValue("errno", e.errnoName())
                    .log("could not remove an unfinished upload");
        } finally {
            file.close();
        }
    }

    private static String randomName() {
        byte[] bytes = new byte[8];
        RANDOM.nextBytes(bytes);
        return PREFIX + HexFormat.of().formatHex(bytes);
    }
}

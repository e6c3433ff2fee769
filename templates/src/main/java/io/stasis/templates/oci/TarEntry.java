package io.stasis.templates.oci;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One member of a tar archive as {@link TarReader} reports it, extended headers applied.
 *
 * @param name   the path as the archive holds it (e.g. {@code ./etc/passwd}, {@code usr/bin/}): not normalised or checked here
 * @param kind   what the member is, with what only that kind has
 * @param mode   the permission bits, setuid, setgid and sticky included ({@code 07777} at most)
 * @param uid    the owner as archived (pax may give any non-negative number)
 * @param gid    the group as archived
 * @param mtime  the modification time, to the nanosecond when a pax header gave one
 * @param xattrs extended attributes from pax {@code SCHILY.xattr.*} records, by name; values are raw bytes
 *               (the arrays are shared: do not change them)
 */
public record TarEntry(String name, Kind kind, int mode, long uid, long gid, Instant mtime, Map<String, byte[]> xattrs) {
    public TarEntry {
        Objects.requireNonNull(name);
        Objects.requireNonNull(kind);
        Objects.requireNonNull(mtime);
        xattrs = Map.copyOf(xattrs);
    }

    /** What a member is. Regular files alone carry data ({@link TarReader#content()}). */
    public sealed interface Kind permits RegularFile, Directory, Symlink, HardLink, CharDevice, BlockDevice, Fifo {
    }

    /** A regular file of {@code size} bytes. */
    public record RegularFile(long size) implements Kind {
    }

    public record Directory() implements Kind {
    }

    /** A symbolic link holding {@code target} as archived. */
    public record Symlink(String target) implements Kind {
    }

    /** Another name for the earlier member {@code target} (a path as archived). */
    public record HardLink(String target) implements Kind {
    }

    public record CharDevice(long major, long minor) implements Kind {
    }

    public record BlockDevice(long major, long minor) implements Kind {
    }

    public record Fifo() implements Kind {
    }
}

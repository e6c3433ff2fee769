package io.stasis.fs.linux;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.OptionalInt;

/** The tests' shorthands for {@link ConfinedRoot} calls: small content from memory, and deletes that may find nothing. */
final class ConfinedCalls {
    private ConfinedCalls() {
    }

    /** Writes {@code data} with permission bits {@code mode}, synced, as a sandbox file would be. */
    static Stat write(ConfinedRoot root, String path, byte[] data, int mode) {
        try {
            return root.writeFile(path, new ByteArrayInputStream(data), OptionalInt.of(mode), true);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // cannot happen: the content is in memory
        }
    }

    /** Deletes a whole tree, quietly when there is nothing (or a file above it), as the runtime does with a process's files. */
    static void deleteIfPresent(ConfinedRoot root, String path) {
        try {
            root.delete(path, true);
        } catch (LinuxException e) {
            if (!e.is(Errno.ENOENT) && !e.is(Errno.ENOTDIR)) throw e;
        }
    }
}

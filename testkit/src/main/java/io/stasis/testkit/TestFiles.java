package io.stasis.testkit;

import io.stasis.core.spi.FileOwner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/** Small things tests that write files need. */
public final class TestFiles {
    private TestFiles() {
    }

    /** The uid and gid this process runs as (the owner of its own /proc entry). */
    public static FileOwner currentUser() {
        try {
            Path self = Path.of("/proc/self");
            return new FileOwner((Integer) Files.getAttribute(self, "unix:uid"), (Integer) Files.getAttribute(self, "unix:gid"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code size} bytes that do not compress, the same for the same seed. */
    public static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }
}

package io.stasis.blob.content;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.SplittableRandom;

/** Streams for the tests: random (incompressible) bytes from a seed, and readers. */
final class TestData {
    private TestData() {
    }

    static byte[] random(long seed, int size) {
        byte[] data = new byte[size];
        new SplittableRandom(seed).nextBytes(data);
        return data;
    }

    static byte[] readAll(InputStream in) {
        try (in) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static double mbPerSecond(long bytes, long nanos) {
        return bytes / 1e6 / (nanos / 1e9);
    }
}

package io.stasis.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Bytes like those of a sandbox's root, of three kinds, the same for the same seed. None repeats
 * at the scale of a chunk (64 KiB and more), so whatever deduplicates in the blob scenarios does
 * so because a stream repeats, not because the content does.
 * <ul>
 * <li>{@link Kind#TEXT}: source code and documentation: indented lines of 2-10 words from a
 * vocabulary of 4,096, punctuation and numbers; zstd level 3 packs it about 3x.
 * <li>{@link Kind#BINARY}: executables and libraries: 64-byte blocks, a third random, a third
 * zeros, a third one of 256 fixed patterns; about 2x.
 * <li>{@link Kind#COMPRESSED}: archives, images, wheels: random bytes, which nothing packs.
 * </ul>
 */
final class MixedContent {
    enum Kind {
        TEXT, BINARY, COMPRESSED
    }

    private static final byte[][] WORDS = new byte[4096][];
    private static final byte[][] PATTERNS = new byte[256][64];
    private static final byte[] PUNCTUATION = ".,()=:;[]{}+-*/\"'#".getBytes(StandardCharsets.US_ASCII);

    static {
        var random = new SplittableRandom(0x5eed);
        for (int i = 0; i < WORDS.length; i++) {
            var word = new byte[2 + random.nextInt(11)];
            for (int j = 0; j < word.length; j++) word[j] = (byte) ('a' + random.nextInt(26));
            if (random.nextInt(5) == 0) word[0] = (byte) ('A' + random.nextInt(26));
            WORDS[i] = word;
        }
        for (byte[] pattern : PATTERNS) random.nextBytes(pattern);
    }

    private MixedContent() {
    }

    /** Fills {@code into[offset, offset + length)} with content of {@code kind}. */
    static void fill(Kind kind, SplittableRandom random, byte[] into, int offset, int length) {
        switch (kind) {
            case TEXT -> text(random, into, offset, length);
            case BINARY -> binary(random, into, offset, length);
            case COMPRESSED -> {
                var bytes = new byte[length];
                random.nextBytes(bytes);
                System.arraycopy(bytes, 0, into, offset, length);
            }
        }
    }

    /** {@code length} bytes of {@code kind}. */
    static byte[] of(Kind kind, SplittableRandom random, int length) {
        var bytes = new byte[length];
        fill(kind, random, bytes, 0, length);
        return bytes;
    }

    /**
     * {@code length} bytes in segments of 64 KiB to 1 MiB, each of a kind drawn with these
     * weights: 35% text, 35% binary, 30% compressed.
     */
    static byte[] mixed(int length, long seed) {
        var random = new SplittableRandom(seed);
        var bytes = new byte[length];
        int at = 0;
        while (at < length) {
            int segment = Math.min(length - at, (64 << 10) + random.nextInt(960 << 10));
            int draw = random.nextInt(100);
            Kind kind = draw < 35 ? Kind.TEXT : draw < 70 ? Kind.BINARY : Kind.COMPRESSED;
            fill(kind, random, bytes, at, segment);
            at += segment;
        }
        return bytes;
    }

    private static void text(SplittableRandom random, byte[] into, int offset, int length) {
        int end = offset + length;
        int at = offset;
        while (at < end) {
            int indent = 4 * random.nextInt(4);
            for (int i = 0; i < indent && at < end; i++) into[at++] = ' ';
            int words = 2 + random.nextInt(9);
            for (int w = 0; w < words && at < end; w++) {
                if (random.nextInt(8) == 0) {
                    byte[] number = Integer.toString(random.nextInt(100_000)).getBytes(StandardCharsets.US_ASCII);
                    for (int i = 0; i < number.length && at < end; i++) into[at++] = number[i];
                } else {
                    byte[] word = WORDS[random.nextInt(WORDS.length)];
                    for (int i = 0; i < word.length && at < end; i++) into[at++] = word[i];
                }
                if (at < end) into[at++] = random.nextInt(4) == 0 ? PUNCTUATION[random.nextInt(PUNCTUATION.length)] : (byte) ' ';
            }
            if (at < end) into[at++] = '\n';
        }
    }

    private static void binary(SplittableRandom random, byte[] into, int offset, int length) {
        var block = new byte[64];
        for (int at = offset; at < offset + length; at += 64) {
            int n = Math.min(64, offset + length - at);
            switch (random.nextInt(3)) {
                case 0 -> {
                    random.nextBytes(block);
                    System.arraycopy(block, 0, into, at, n);
                }
                case 1 -> Arrays.fill(into, at, at + n, (byte) 0);
                default -> System.arraycopy(PATTERNS[random.nextInt(PATTERNS.length)], 0, into, at, n);
            }
        }
    }
}

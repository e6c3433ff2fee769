package io.stasis.bench;

import io.stasis.bench.MixedContent.Kind;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A file tree like a sandbox's root, written into a directory, and the small edits a sandbox makes
 * between two checkpoints. The same seed gives the same tree and the same edits.
 *
 * <p>Files, by count: 55% text (median 8 KiB), 35% binary (median 16 KiB), 10% compressed (median
 * 32 KiB), sizes log-normal (sigma 1.5-2, so a few files of megabytes hold much of the bytes; at
 * most 64 MiB and an eighth of the tree), 24 to a directory, directories three deep. By bytes that
 * is about a fifth text, three fifths binary, a fifth compressed: for 1 GiB, some 15,000 files.
 * See {@link MixedContent} for the kinds.
 */
final class RootTree {
    /** One file: its path below the tree's root, size and kind. */
    record Entry(String path, long size, Kind kind) {
    }

    /** What {@link #edit} changed. */
    record Edits(int files, long filesBytes, long bytesWritten) {
    }

    private static final int FILES_PER_DIRECTORY = 24;
    private static final int WRITE_BLOCK = 1 << 20;

    private final Path root;
    private final List<Entry> entries;
    private final long bytes;

    private RootTree(Path root, List<Entry> entries, long bytes) {
        this.root = root;
        this.entries = List.copyOf(entries);
        this.bytes = bytes;
    }

    /** Writes files of about {@code bytes} in all into the (empty) directory {@code root}. */
    static RootTree write(Path root, long bytes, long seed) throws IOException {
        var random = new SplittableRandom(seed);
        long largest = Math.max(64 << 10, Math.min(64L << 20, bytes / 8));
        var entries = new ArrayList<Entry>();
        long total = 0;
        while (total < bytes) {
            int draw = random.nextInt(100);
            Kind kind = draw < 55 ? Kind.TEXT : draw < 90 ? Kind.BINARY : Kind.COMPRESSED;
            double median = switch (kind) {
                case TEXT -> 8 << 10;
                case BINARY -> 16 << 10;
                case COMPRESSED -> 32 << 10;
            };
            double sigma = kind == Kind.TEXT ? 1.5 : 2;
            long size = Math.round(median * Math.exp(sigma * gaussian(random)));
            size = Math.max(1, Math.min(Math.min(size, largest), bytes - total));
            int n = entries.size();
            int dir = n / FILES_PER_DIRECTORY;
            String extension = switch (kind) {
                case TEXT -> ".py";
                case BINARY -> ".so";
                case COMPRESSED -> ".gz";
            };
            String path = "d" + (dir / 256) + "/d" + (dir / 16 % 16) + "/d" + (dir % 16) + "/f" + n + extension;
            entries.add(new Entry(path, size, kind));
            total += size;
        }
        var buffer = new byte[WRITE_BLOCK];
        for (Entry entry : entries) {
            Path file = root.resolve(entry.path());
            Files.createDirectories(file.getParent());
            var content = new SplittableRandom(random.nextLong());
            try (var out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                for (long left = entry.size(); left > 0; ) {
                    int n = (int) Math.min(left, buffer.length);
                    MixedContent.fill(entry.kind(), content, buffer, 0, n);
                    writeFully(out, ByteBuffer.wrap(buffer, 0, n));
                    left -= n;
                }
            }
        }
        return new RootTree(root, entries, total);
    }

    long bytes() {
        return bytes;
    }

    int files() {
        return entries.size();
    }

    /**
     * Makes one small edit in each of files picked at random (each file as likely as any other,
     * whatever its size) until the files edited hold {@code fraction} of the tree's bytes. An edit
     * overwrites, in place, a range at a random offset with new content of the file's kind: 40 to
     * 400 bytes of text (a changed line) or 256 bytes to 4 KiB of binary or compressed content (a
     * patched record); one text edit in five appends its line instead (a log growing).
     */
    Edits edit(double fraction, long seed) throws IOException {
        var random = new SplittableRandom(seed);
        var order = new ArrayList<>(entries);
        for (int i = order.size() - 1; i > 0; i--) Collections.swap(order, i, random.nextInt(i + 1));
        long budget = Math.round(bytes * fraction);
        int files = 0;
        long filesBytes = 0;
        long written = 0;
        for (Entry entry : order) {
            if (filesBytes >= budget) break;
            boolean text = entry.kind() == Kind.TEXT;
            int length = (int) Math.min(entry.size(), text ? 40 + random.nextInt(361) : 256 + random.nextInt(3841));
            boolean append = text && random.nextInt(5) == 0;
            long offset = append ? entry.size() : random.nextLong(entry.size() - length + 1);
            byte[] content = MixedContent.of(entry.kind(), random, length);
            try (var out = FileChannel.open(root.resolve(entry.path()), StandardOpenOption.WRITE)) {
                out.position(offset);
                writeFully(out, ByteBuffer.wrap(content));
            }
            files++;
            filesBytes += entry.size();
            written += length;
        }
        return new Edits(files, filesBytes, written);
    }

    private static void writeFully(FileChannel out, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) out.write(buffer);
    }

    /** A standard normal draw (Box-Muller). */
    private static double gaussian(SplittableRandom random) {
        double u = 1 - random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
    }
}

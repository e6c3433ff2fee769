package io.stasis.core.exec;

import io.stasis.core.spi.ExecHandle;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A process's output as the runtime's files behave: append-only per stream, a drop frees whole
 * 4 KiB blocks at the start (they read as zeros, and where the kept part starts moves on), a read
 * returns at most 5000 bytes. Any number of handles watch it; the reads of those made by
 * {@link #handle} are counted. Bytes written are never 0, so a hole passed on shows.
 */
final class FakeOutputFiles {
    private final Map<OutputKind, ByteArrayOutputStream> data = streams();
    private final Map<OutputKind, ByteArrayOutputStream> original = streams();
    private final Map<OutputKind, Long> kept = new EnumMap<>(Map.of(OutputKind.STDOUT, 0L, OutputKind.STDERR, 0L));
    private final AtomicInteger ownReads = new AtomicInteger();
    private long version;
    private ExitStatus exit;
    private int next;

    private static Map<OutputKind, ByteArrayOutputStream> streams() {
        return new EnumMap<>(Map.of(OutputKind.STDOUT, new ByteArrayOutputStream(), OutputKind.STDERR, new ByteArrayOutputStream()));
    }

    synchronized void write(OutputKind kind, int bytes) {
        for (int i = 0; i < bytes; i++) {
            byte b = (byte) (1 + (next++ % 255));
            data.get(kind).write(b);
            original.get(kind).write(b);
        }
        changed();
    }

    /** The output limiter: keeps the last {@code keep} bytes of a stream (whole blocks before them go). */
    void keepLast(OutputKind kind, int keep) {
        dropBefore(kind, Math.max(0, size(kind) - keep));
    }

    synchronized long dropBefore(OutputKind kind, long offset) {
        long blocks = offset & ~4095L; // as the filesystem frees whole blocks
        if (blocks > kept.get(kind)) {
            byte[] all = data.get(kind).toByteArray();
            Arrays.fill(all, 0, (int) blocks, (byte) 0);
            var replaced = new ByteArrayOutputStream();
            replaced.writeBytes(all);
            data.put(kind, replaced);
            kept.put(kind, blocks);
            changed();
        }
        return kept.get(kind);
    }

    synchronized void exit(ExitStatus status) {
        exit = status;
        changed();
    }

    synchronized long size(OutputKind kind) {
        return data.get(kind).size();
    }

    /** Everything written to the stream, dropped parts included. */
    synchronized byte[] written(OutputKind kind) {
        return original.get(kind).toByteArray();
    }

    /** How many reads the handles made by {@link #handle} have made. */
    int ownReads() {
        return ownReads.get();
    }

    private void changed() {
        version++;
        notifyAll();
    }

    /** A watcher's own handle: its reads are counted. */
    ExecHandle handle() {
        return handle(true);
    }

    /** A handle whose reads are not counted (a shared feed's). */
    ExecHandle feedHandle() {
        return handle(false);
    }

    private ExecHandle handle(boolean own) {
        return new ExecHandle() {
            private long seenVersion = -1;

            @Override
            public long pid() {
                return 1;
            }

            @Override
            public Optional<ExitStatus> awaitExit(Duration timeout) {
                synchronized (FakeOutputFiles.this) {
                    return Optional.ofNullable(exit);
                }
            }

            @Override
            public void awaitOutput(Duration timeout) throws InterruptedException {
                synchronized (FakeOutputFiles.this) {
                    long deadline = System.nanoTime() + timeout.toNanos();
                    while (version == seenVersion) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) break;
                        TimeUnit.NANOSECONDS.timedWait(FakeOutputFiles.this, left);
                    }
                    seenVersion = version;
                }
            }

            @Override
            public void killTree() {
            }

            @Override
            public byte[] read(OutputKind kind, long offset, int maxBytes) {
                if (own) ownReads.incrementAndGet();
                synchronized (FakeOutputFiles.this) {
                    byte[] all = data.get(kind).toByteArray();
                    if (offset >= all.length) return new byte[0];
                    return Arrays.copyOfRange(all, (int) offset, (int) Math.min(all.length, offset + Math.min(maxBytes, 5000)));
                }
            }

            @Override
            public long keptFrom(OutputKind kind) {
                synchronized (FakeOutputFiles.this) {
                    return kept.get(kind);
                }
            }

            @Override
            public long dropBefore(OutputKind kind, long offset) {
                return FakeOutputFiles.this.dropBefore(kind, offset);
            }

            @Override
            public void close() {
            }
        };
    }
}

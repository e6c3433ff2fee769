package io.stasis.audit.jsonl;

import io.stasis.core.audit.AuditEntry;
import io.stasis.core.audit.AuditPage;
import io.stasis.core.audit.AuditQuery;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.AuditLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit log as JSON lines ({@link AuditCodec}) in {@code dir}: files named
 * {@code audit-<millis>.jsonl} after the time each was begun, the newest the one written to. A file
 * past {@code maxFileBytes} is closed and a new one begun; past {@code keepFiles} files, the oldest
 * go. Lines are written whole with one {@code write} each, in order, and reach the disk with the
 * page cache (forced at each rotation and at close): a host crash may lose the last seconds, a
 * service crash nothing written. A line cut short is skipped when read.
 * <p>Listing reads the files newest first; a cursor names a file and a line in it, so it stays
 * valid across rotations (until its file is removed, then the listing goes on with what is older,
 * which is gone too: it ends).
 */
public final class JsonLinesAuditLog implements AuditLog, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JsonLinesAuditLog.class);
    private static final Pattern FILE = Pattern.compile("audit-(\\d{13})\\.jsonl");
    private static final Pattern CURSOR = Pattern.compile("(\\d{13})\\.(\\d{1,10})");

    private final Path dir;
    private final long maxFileBytes;
    private final int keepFiles;
    private final Clock clock;
    private FileChannel current;
    private long currentBytes;
    private boolean failing;

    /**
     * @param maxFileBytes a file's size past which the next line begins a new file
     * @param keepFiles    files kept, the one written to included
     */
    public JsonLinesAuditLog(Path dir, long maxFileBytes, int keepFiles, Clock clock) {
        if (maxFileBytes < 1 || keepFiles < 1) throw new IllegalArgumentException("maxFileBytes and keepFiles must be positive");
        this.dir = dir;
        this.maxFileBytes = maxFileBytes;
        this.keepFiles = keepFiles;
        this.clock = clock;
        try {
            Files.createDirectories(dir);
            var files = files();
            if (files.isEmpty()) begin();
            else open(files.getLast());
        } catch (IOException e) {
            throw new UncheckedIOException("opening the audit log in " + dir, e);
        }
    }

    @Override
    public synchronized void append(AuditEntry entry) {
        byte[] line = AuditCodec.encode(entry);
        try {
            if (currentBytes > 0 && currentBytes + line.length > maxFileBytes) rotate();
            var buffer = ByteBuffer.wrap(line);
            while (buffer.hasRemaining()) current.write(buffer);
            currentBytes += line.length;
            if (failing) log.atInfo().addKeyValue("dir", dir).log("the audit log is written again");
            failing = false;
        } catch (IOException e) {
            if (!failing) log.atError().addKeyValue("dir", dir).setCause(e).log("could not write the audit log: entries are lost until it can");
            failing = true;
        }
    }

    @Override
    public AuditPage query(AuditQuery query) {
        var start = query.cursor().map(JsonLinesAuditLog::parseCursor);
        var items = new ArrayList<AuditEntry>();
        try {
            var files = files();
            for (int f = files.size() - 1; f >= 0; f--) {
                long millis = millisOf(files.get(f));
                if (start.isPresent() && millis > start.get()[0]) continue;
                List<String> lines = readLines(files.get(f));
                int from = start.isPresent() && millis == start.get()[0] ? (int) Math.min(start.get()[1], lines.size()) : lines.size();
                for (int i = from - 1; i >= 0; i--) {
                    var entry = AuditCodec.decode(lines.get(i));
                    if (entry.isEmpty() || !query.matches(entry.get())) continue;
                    if (items.size() == query.limit()) return new AuditPage(items, Optional.of(String.format("%013d.%d", millis, i + 1)));
                    items.add(entry.get());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading the audit log in " + dir, e);
        }
        return new AuditPage(items, Optional.empty());
    }

    private static long[] parseCursor(String cursor) {
        var m = CURSOR.matcher(cursor);
        if (!m.matches()) throw StasisException.invalid("cursor", "not a cursor of the audit log: '" + cursor + "'");
        return new long[]{Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
    }

    /** The file's whole lines (one being written may end without its newline: it is left out). */
    private static List<String> readLines(Path file) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return List.of(); // removed by a rotation meanwhile
        }
        int end = bytes.length;
        while (end > 0 && bytes[end - 1] != '\n') end--;
        if (end == 0) return List.of();
        return List.of(new String(bytes, 0, end - 1, StandardCharsets.UTF_8).split("\n", -1));
    }

    private List<Path> files() throws IOException {
        try (var entries = Files.list(dir)) {
            return entries.filter(p -> FILE.matcher(p.getFileName().toString()).matches()).sorted().toList();
        }
    }

    private static long millisOf(Path file) {
        var m = FILE.matcher(file.getFileName().toString());
        if (!m.matches()) throw new IllegalArgumentException(file.toString());
        return Long.parseLong(m.group(1));
    }

    private void rotate() throws IOException {
        current.force(false);
        current.close();
        begin();
        var files = files();
        for (int i = 0; i < files.size() - keepFiles; i++) Files.deleteIfExists(files.get(i));
    }

    /** A new file, named after now, or after the newest file's time plus one where the clock has not passed it. */
    private void begin() throws IOException {
        var files = files();
        long millis = Math.max(clock.millis(), files.isEmpty() ? 0 : millisOf(files.getLast()) + 1);
        open(dir.resolve(String.format("audit-%013d.jsonl", millis)));
    }

    private void open(Path file) throws IOException {
        boolean cutShort = endsWithoutNewline(file);
        current = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        currentBytes = current.size();
        // A line a crash cut short: a newline ends it, so the next one starts on a line of its own.
        if (cutShort) currentBytes += current.write(ByteBuffer.wrap(new byte[]{'\n'}));
    }

    private static boolean endsWithoutNewline(Path file) throws IOException {
        if (!Files.exists(file)) return false;
        try (var in = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = in.size();
            if (size == 0) return false;
            var last = ByteBuffer.allocate(1);
            in.read(last, size - 1);
            return last.get(0) != '\n';
        }
    }

    @Override
    public synchronized void close() {
        try {
            current.force(false);
            current.close();
        } catch (IOException e) {
            log.atWarn().addKeyValue("dir", dir).setCause(e).log("could not close the audit log");
        }
    }
}

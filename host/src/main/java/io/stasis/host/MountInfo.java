package io.stasis.host;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The mount table as the kernel shows it in {@code /proc/self/mountinfo} (proc(5)): one
 * {@link Entry} per mount, in mount order. A snapshot: read it again after mounting or unmounting.
 */
public record MountInfo(List<Entry> entries) {
    /** The calling process's mount table. */
    public static final Path SELF = Path.of("/proc/self/mountinfo");

    /** Deepest mount point first, then the newest (highest id) first: the order to unmount in. */
    private static final Comparator<Entry> UNMOUNT_ORDER = Comparator.comparingInt((Entry e) -> e.mountPoint().getNameCount()).reversed()
            .thenComparing(Comparator.comparingInt(Entry::id).reversed());

    public MountInfo {
        entries = List.copyOf(entries);
    }

    /**
     * One mount. {@code root} and {@code mountPoint} are unescaped ({@code \040} is a space), and
     * so is {@code source} (e.g. {@code /dev/loop0}, or {@code none}); {@code superOptions} are the
     * filesystem's own options ({@code rw,subvolid=5,...}). {@code source} and {@code superOptions}
     * are empty where a line lacks them.
     */
    public record Entry(int id, int parentId, String root, Path mountPoint, String fsType, String source, String superOptions) {
    }

    /**
     * Reads {@link #SELF}.
     *
     * @throws UncheckedIOException if it cannot be read (no /proc)
     */
    public static MountInfo read() {
        try {
            return parse(Files.readString(SELF));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + SELF, e);
        }
    }

    /** Parses mountinfo text; lines that do not have the expected shape are skipped. */
    public static MountInfo parse(String text) {
        var entries = new ArrayList<Entry>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) continue;
            String[] f = line.split(" ");
            int separator = List.of(f).indexOf("-"); // optional fields (shared:N master:N ...) end at a lone "-"
            if (separator < 6 || separator + 1 >= f.length) continue;
            String source = separator + 2 < f.length ? unescape(f[separator + 2]) : "";
            String superOptions = separator + 3 < f.length ? f[separator + 3] : "";
            entries.add(new Entry(Integer.parseInt(f[0]), Integer.parseInt(f[1]), unescape(f[3]), Path.of(unescape(f[4])),
                    f[separator + 1], source, superOptions));
        }
        return new MountInfo(entries);
    }

    /** The topmost mount exactly at {@code mountPoint} (an absolute, symlink-free path). */
    public Optional<Entry> at(Path mountPoint) {
        Entry found = null;
        for (var e : entries) if (e.mountPoint().equals(mountPoint)) found = e; // later mounts stack on top
        return Optional.ofNullable(found);
    }

    /** The mount that holds {@code path}: the last-mounted entry whose mount point is its longest prefix. */
    public Optional<Entry> containing(Path path) {
        Entry best = null;
        for (var e : entries) {
            if (!path.startsWith(e.mountPoint())) continue;
            if (best == null || e.mountPoint().getNameCount() >= best.mountPoint().getNameCount()) best = e;
        }
        return Optional.ofNullable(best);
    }

    /**
     * Mounts strictly below {@code dir} (an absolute, symlink-free path), deepest then newest
     * first: the order to unmount them in.
     */
    public List<Entry> below(Path dir) {
        return entries.stream().filter(e -> e.mountPoint().startsWith(dir) && !e.mountPoint().equals(dir)).sorted(UNMOUNT_ORDER).toList();
    }

    /** Like {@link #below(Path)}, with the mounts exactly at {@code dir} too (they come last). */
    public List<Entry> atOrBelow(Path dir) {
        return entries.stream().filter(e -> e.mountPoint().startsWith(dir)).sorted(UNMOUNT_ORDER).toList();
    }

    /** Undoes the octal escapes ({@code \ooo}) the kernel writes for space, tab, newline and backslash. */
    static String unescape(String field) {
        if (field.indexOf('\\') < 0) return field;
        var out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && isOctal(field, i + 1)) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else out.append(c);
        }
        return out.toString();
    }

    private static boolean isOctal(String s, int from) {
        if (from + 3 > s.length()) return false;
        for (int i = from; i < from + 3; i++) if (s.charAt(i) < '0' || s.charAt(i) > '7') return false;
        return true;
    }
}

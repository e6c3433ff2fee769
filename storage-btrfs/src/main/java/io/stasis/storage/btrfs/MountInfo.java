package io.stasis.storage.btrfs;

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
 * {@link Entry} per mount, in mount order.
 */
record MountInfo(List<Entry> entries) {
    static final Path SELF = Path.of("/proc/self/mountinfo");

    /** One mount. Paths are unescaped ({@code \040} is a space). */
    record Entry(int id, int parentId, String root, Path mountPoint, String fsType, String source, String superOptions) {
    }

    static MountInfo read() {
        try {
            return parse(Files.readString(SELF));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + SELF, e);
        }
    }

    static MountInfo parse(String text) {
        var entries = new ArrayList<Entry>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) continue;
            String[] f = line.split(" ");
            int separator = List.of(f).indexOf("-"); // optional fields (shared:N ...) end at a lone "-"
            if (separator < 6 || separator + 2 >= f.length) continue;
            entries.add(new Entry(Integer.parseInt(f[0]), Integer.parseInt(f[1]), unescape(f[3]), Path.of(unescape(f[4])),
                    f[separator + 1], unescape(f[separator + 2]), separator + 3 < f.length ? f[separator + 3] : ""));
        }
        return new MountInfo(List.copyOf(entries));
    }

    /** The topmost mount exactly at {@code mountPoint} (an absolute, symlink-free path). */
    Optional<Entry> at(Path mountPoint) {
        Entry found = null;
        for (var e : entries) if (e.mountPoint().equals(mountPoint)) found = e; // later mounts stack on top
        return Optional.ofNullable(found);
    }

    /** The mount that holds {@code path}: the last-mounted entry whose mount point is its longest prefix. */
    Optional<Entry> containing(Path path) {
        Entry best = null;
        for (var e : entries) {
            if (!path.startsWith(e.mountPoint())) continue;
            if (best == null || e.mountPoint().getNameCount() >= best.mountPoint().getNameCount()) best = e;
        }
        return Optional.ofNullable(best);
    }

    /** Mounts strictly below {@code dir}, deepest first: the order to unmount them in. */
    List<Entry> below(Path dir) {
        return entries.stream()
                .filter(e -> e.mountPoint().startsWith(dir) && !e.mountPoint().equals(dir))
                .sorted(Comparator.comparingInt((Entry e) -> e.mountPoint().getNameCount()).reversed()
                        .thenComparing(Comparator.comparingInt(Entry::id).reversed()))
                .toList();
    }

    /** Undoes the octal escapes the kernel writes for space, tab, newline and backslash. */
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

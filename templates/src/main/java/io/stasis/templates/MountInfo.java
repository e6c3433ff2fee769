package io.stasis.templates;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The mount points in {@code /proc/self/mountinfo} (proc(5)), in mount order. */
record MountInfo(List<Entry> entries) {
    static final Path SELF = Path.of("/proc/self/mountinfo");

    /** One mount; the mount point is unescaped ({@code \040} is a space). */
    record Entry(int id, Path mountPoint, String fsType) {
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
            String[] f = line.split(" ");
            int separator = List.of(f).indexOf("-"); // optional fields end at a lone "-"
            if (separator < 6 || separator + 1 >= f.length) continue;
            entries.add(new Entry(Integer.parseInt(f[0]), Path.of(unescape(f[4])), f[separator + 1]));
        }
        return new MountInfo(List.copyOf(entries));
    }

    /** Mounts at or below {@code dir}, deepest (then newest) first: the order to unmount them in. */
    List<Entry> atOrBelow(Path dir) {
        return entries.stream()
                .filter(e -> e.mountPoint().startsWith(dir))
                .sorted(Comparator.comparingInt((Entry e) -> e.mountPoint().getNameCount()).reversed()
                        .thenComparing(Comparator.comparingInt(Entry::id).reversed()))
                .toList();
    }

    static String unescape(String field) {
        if (field.indexOf('\\') < 0) return field;
        var out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 4 <= field.length() && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else out.append(c);
        }
        return out.toString();
    }
}

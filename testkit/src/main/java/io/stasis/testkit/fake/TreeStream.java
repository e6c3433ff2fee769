package io.stasis.testkit.fake;

import io.stasis.host.FileTrees;
import io.stasis.testkit.fake.TreeEntry.Kind;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The fakes' send stream: a tree as a list of entries, like a {@code btrfs send} stream in what it
 * does (a full stream, or an incremental one holding only what differs from a parent the
 * receiver has; the stream names the snapshot it was sent from), not in its format. A stream cut
 * short, or one whose parent is missing, fails to read with an {@link IOException}.
 *
 * <pre>
 * header:  "stasis-fake-tree-stream", version, name, parent name ("" for a full stream)
 * then:    'D' path                  delete what is at path (incremental streams)
 *          'E' path kind mode uid gid, then a link's target or a file's length and bytes
 *          'Z'                       the end
 * </pre>
 */
final class TreeStream {
    private static final String MAGIC = "stasis-fake-tree-stream";
    private static final int VERSION = 1;
    private static final byte DELETE = 'D';
    private static final byte ENTRY = 'E';
    private static final byte END = 'Z';

    private TreeStream() {
    }

    /** A snapshot a stream is sent from or relative to: its name and where its tree is. */
    record Snapshot(String name, Path tree) {
    }

    /** Writes {@code snapshot}: all of it, or with {@code parent} only what differs from that one. */
    static void write(Snapshot snapshot, Optional<Snapshot> parent, OutputStream stream) throws IOException {
        var out = new DataOutputStream(new BufferedOutputStream(stream));
        out.writeUTF(MAGIC);
        out.writeInt(VERSION);
        out.writeUTF(snapshot.name());
        out.writeUTF(parent.map(Snapshot::name).orElse(""));
        var now = byPath(Trees.entries(snapshot.tree()));
        var before = parent.isPresent() ? byPath(Trees.entries(parent.get().tree())) : Map.<String, TreeEntry>of();
        for (var old : before.values()) {
            var current = now.get(old.path());
            if (current == null || current.kind() != old.kind()) {
                out.writeByte(DELETE);
                out.writeUTF(old.path());
            }
        }
        for (var entry : now.values()) {
            var old = before.get(entry.path());
            if (old != null && old.equals(entry) && sameContent(parent.map(Snapshot::tree).orElseThrow(), snapshot.tree(), entry)) continue;
            writeEntry(out, snapshot.tree(), entry);
        }
        out.writeByte(END);
        out.flush();
    }

    private static Map<String, TreeEntry> byPath(Iterable<TreeEntry> entries) {
        var map = new LinkedHashMap<String, TreeEntry>();
        for (var entry : entries) map.put(entry.path(), entry);
        return map;
    }

    private static boolean sameContent(Path before, Path now, TreeEntry entry) throws IOException {
        if (entry.kind() != Kind.FILE) return true;
        return Files.mismatch(Trees.resolve(before, entry.path()), Trees.resolve(now, entry.path())) == -1;
    }

    private static void writeEntry(DataOutputStream out, Path tree, TreeEntry entry) throws IOException {
        out.writeByte(ENTRY);
        out.writeUTF(entry.path());
        out.writeByte(entry.kind().ordinal());
        out.writeInt(entry.mode());
        out.writeInt(entry.uid());
        out.writeInt(entry.gid());
        switch (entry.kind()) {
            case DIRECTORY -> { }
            case LINK -> out.writeUTF(entry.linkTarget());
            case FILE -> {
                Path file = Trees.resolve(tree, entry.path());
                long length = Files.size(file);
                out.writeLong(length);
                long copied;
                try (InputStream in = Files.newInputStream(file)) {
                    copied = in.transferTo(out);
                }
                if (copied != length) throw new IOException(file + " changed while it was sent");
            }
        }
    }

    /**
     * Reads a stream into {@code into}, which must not exist: a full stream makes the tree; an
     * incremental one copies its parent's tree, found by name through {@code parents}, and applies
     * the changes. Returns the name of the snapshot the stream was sent from. On failure,
     * {@code into} may hold part of the tree: the caller removes it.
     */
    static String read(InputStream stream, Function<String, Optional<Path>> parents, Path into) throws IOException {
        var in = new DataInputStream(new BufferedInputStream(stream));
        if (!MAGIC.equals(in.readUTF())) throw new IOException("not a stream of a directory store");
        int version = in.readInt();
        if (version != VERSION) throw new IOException("stream version " + version + ", expected " + VERSION);
        String name = in.readUTF();
        String parent = in.readUTF();
        if (!parent.isEmpty()) {
            Path base = parents.apply(parent).orElseThrow(() -> new IOException("the parent " + parent + " of an incremental stream is not here"));
            Trees.copy(base, into);
        }
        var directories = new ArrayList<TreeEntry>();
        while (true) {
            byte op = in.readByte();
            switch (op) {
                case END -> {
                    Trees.applyDirectoryMetadata(into, directories);
                    return name;
                }
                case DELETE -> FileTrees.deleteRecursively(Trees.resolve(into, checked(in.readUTF())));
                case ENTRY -> readEntry(in, into, directories);
                default -> throw new IOException("corrupt stream: unknown operation " + op);
            }
        }
    }

    private static void readEntry(DataInputStream in, Path into, ArrayList<TreeEntry> directories) throws IOException {
        String path = checked(in.readUTF());
        int kind = in.readByte();
        if (kind < 0 || kind >= Kind.values().length) throw new IOException("corrupt stream: unknown kind " + kind + " of " + path);
        var entry = new TreeEntry(path, Kind.values()[kind], in.readInt(), in.readInt(), in.readInt(),
                kind == Kind.LINK.ordinal() ? in.readUTF() : null);
        Path target = Trees.resolve(into, path);
        switch (entry.kind()) {
            case DIRECTORY -> {
                if (!Files.isDirectory(target)) Files.createDirectory(target);
                directories.add(entry); // its metadata once its entries are in
            }
            case LINK -> {
                Files.deleteIfExists(target);
                Files.createSymbolicLink(target, Path.of(entry.linkTarget()));
                Trees.applyMetadata(target, entry);
            }
            case FILE -> {
                Files.deleteIfExists(target);
                copyExactly(in, in.readLong(), target);
                Trees.applyMetadata(target, entry);
            }
        }
    }

    private static void copyExactly(InputStream in, long length, Path target) throws IOException {
        byte[] buffer = new byte[64 << 10];
        try (OutputStream out = Files.newOutputStream(target)) {
            for (long left = length; left > 0; ) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) throw new EOFException("stream ended inside " + target.getFileName());
                out.write(buffer, 0, n);
                left -= n;
            }
        }
    }

    /** A path of the stream, refused if it would leave the tree. */
    private static String checked(String path) throws IOException {
        if (path.isEmpty()) return path;
        for (String name : path.split("/", -1))
            if (name.isEmpty() || name.equals(".") || name.equals("..")) throw new IOException("corrupt stream: path " + path);
        return path;
    }
}

package io.stasis.templates.oci;

import io.stasis.core.spi.FileOwner;
import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.Errno;
import io.stasis.fs.linux.LinuxException;
import io.stasis.fs.linux.Stat;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of {@link LayerApplier}: the root, the limits' counters, what the current layer wrote
 * (whiteouts spare it), the directories' times to set at the end, and what was skipped.
 */
final class Application {
    private static final Logger log = LoggerFactory.getLogger(LayerApplier.class);
    static final int MAX_SKIPPED_LISTED = 1000;
    /** A sandbox maps 65536 ids: 0 to 65535 inside. */
    static final long MAX_ID = 65535;
    private static final String WHITEOUT = ".wh.";
    private static final String OPAQUE = ".wh..wh..opq";

    private final ConfinedRoot root;
    private final FileOwner sandboxRoot;
    private final LayerApplier.Limits limits;

    private long entries;
    private long files;
    private long bytes;
    private final List<LayerApplier.Skipped> skipped = new ArrayList<>();
    private long skippedCount;
    /** Directories' modification times, set last: adding to a directory changes its time. */
    private final Map<EntryPath, Instant> directoryTimes = new LinkedHashMap<>();
    /** What the current layer wrote, and the directories above it. */
    private Set<EntryPath> written = new HashSet<>();
    private String layer = "";

    Application(ConfinedRoot root, FileOwner sandboxRoot, LayerApplier.Limits limits) {
        this.root = root;
        this.sandboxRoot = sandboxRoot;
        this.limits = limits;
    }

    void applyLayer(InputStream tar, String layerName) {
        layer = layerName;
        written = new HashSet<>();
        var reader = new TarReader(tar, limits.maxFileSize());
        for (var next = nextEntry(reader); next.isPresent(); next = nextEntry(reader)) {
            TarEntry entry = next.get();
            String subject = layer + " entry '" + entry.name() + "'";
            if (++entries > limits.maxEntries())
                throw ImageException.tooLarge(subject, "more than " + limits.maxEntries() + " entries in the image");
            try {
                apply(entry, reader, subject);
            } catch (LinuxException e) {
                throw failed(subject, e);
            }
        }
    }

    /** The next member; what is wrong with the tar itself is named with the layer. */
    private Optional<TarEntry> nextEntry(TarReader reader) {
        try {
            return reader.next();
        } catch (ImageException e) {
            throw new ImageException(e.reason(), layer + " " + e.subject(), layer + ": " + e.getMessage(), e.getCause());
        }
    }

    /** Sets the directories' times, now that nothing is added to them any more. */
    void finish() {
        for (var e : directoryTimes.entrySet()) {
            try {
                if (root.lstat(e.getKey().toString()).map(Stat::isDirectory).orElse(false)) root.setMtime(e.getKey().toString(), e.getValue());
            } catch (LinuxException ex) {
                throw failed("directory '" + e.getKey() + "'", ex);
            }
        }
    }

    LayerApplier.Report report(int layers) {
        return new LayerApplier.Report(layers, entries, files, bytes, skipped, skippedCount);
    }

    // --- one member ---

    private void apply(TarEntry entry, TarReader reader, String subject) {
        EntryPath path = EntryPath.of(entry.name(), subject);
        String name = path.name();
        if (name.startsWith(WHITEOUT)) {
            whiteout(path, subject);
            return;
        }
        if (path.isRoot()) {
            if (!(entry.kind() instanceof TarEntry.Directory)) throw ImageException.refused(subject, "the root itself must be a directory");
            setAttributes(path, entry, subject, false);
            directoryTimes.put(path, entry.mtime());
            return;
        }
        String p = path.toString();
        switch (entry.kind()) {
            case TarEntry.Directory d -> {
                FileOwner owner = owner(entry, subject);
                Optional<Stat> existing = root.lstat(p);
                if (existing.isPresent() && existing.get().isDirectory()) {
                    root.setOwner(p, owner);
                    root.setMode(p, entry.mode());
                } else {
                    existing.ifPresent(x -> root.removeEntry(p));
                    root.createDirectory(p, entry.mode(), owner);
                }
                setXattrs(path, entry, false);
                directoryTimes.put(path, entry.mtime());
            }
            case TarEntry.RegularFile f -> {
                if (f.size() > limits.maxFileSize())
                    throw ImageException.tooLarge(subject, f.size() + " bytes, over the limit of " + limits.maxFileSize() + " per file");
                if ((bytes += f.size()) > limits.maxTotalBytes())
                    throw ImageException.tooLarge(subject, "the image's files hold more than " + limits.maxTotalBytes() + " bytes");
                FileOwner owner = owner(entry, subject);
                makeRoom(p);
                try {
                    root.createFile(p, reader.content(), entry.mode(), owner);
                } catch (IOException e) {
                    throw ImageException.io(subject, "writing it failed: " + e.getMessage(), e);
                }
                files++;
                setXattrs(path, entry, false);
                root.setMtime(p, entry.mtime());
            }
            case TarEntry.Symlink s -> {
                FileOwner owner = owner(entry, subject);
                makeRoom(p);
                root.createSymlink(p, s.target(), owner);
                setXattrs(path, entry, true);
                root.setMtime(p, entry.mtime());
            }
            case TarEntry.HardLink h -> hardLink(path, h, subject);
            case TarEntry.Fifo f -> {
                FileOwner owner = owner(entry, subject);
                makeRoom(p);
                root.createFifo(p, entry.mode(), owner);
                setXattrs(path, entry, false);
                root.setMtime(p, entry.mtime());
            }
            case TarEntry.CharDevice c -> throw ImageException.refused(subject, "a character device (" + c.major() + "," + c.minor()
                    + "): sandboxes get their devices from the runtime, never from an image");
            case TarEntry.BlockDevice b -> throw ImageException.refused(subject, "a block device (" + b.major() + "," + b.minor()
                    + "): sandboxes get their devices from the runtime, never from an image");
        }
        markWritten(path);
    }

    private void hardLink(EntryPath path, TarEntry.HardLink h, String subject) {
        EntryPath target = EntryPath.of(h.target(), subject, "its link target '" + h.target() + "' is ");
        if (target.equals(path)) return; // a link to itself: nothing to do
        if (target.isRoot()) throw ImageException.refused(subject, "a hard link to the root directory");
        Stat existing = root.lstat(target.toString())
                .orElseThrow(() -> ImageException.malformed(subject, "a hard link to '" + h.target() + "', which is not in the root"));
        if (existing.isDirectory()) throw ImageException.refused(subject, "a hard link to the directory '" + h.target() + "'");
        Optional<Stat> here = root.lstat(path.toString());
        if (here.isPresent() && here.get().sameInode(existing)) return;
        makeRoom(path.toString());
        root.createHardLink(path.toString(), target.toString());
    }

    /** Removes what a lower layer left where a member goes (a directory with its tree), as the member replaces it. */
    private void makeRoom(String p) {
        if (root.lstat(p).isPresent()) root.removeEntry(p);
    }

    // --- whiteouts ---

    private void whiteout(EntryPath path, String subject) {
        String name = path.name();
        EntryPath dir = path.parent();
        if (name.equals(OPAQUE)) {
            emptyOfLowerContent(dir);
            return;
        }
        if (name.startsWith(WHITEOUT + WHITEOUT)) {
            skip(path, "AUFS metadata (" + name + "), not a change to the root");
            return;
        }
        String hidden = name.substring(WHITEOUT.length());
        if (hidden.isEmpty() || hidden.equals(".") || hidden.equals(".."))
            throw ImageException.malformed(subject, "a whiteout that names nothing");
        EntryPath target = dir.child(hidden);
        if (written.contains(target)) return; // a whiteout hides lower layers only, never its own layer's entries
        try {
            root.removeEntry(target.toString());
        } catch (LinuxException e) {
            if (!e.is(Errno.ENOTDIR) && !e.is(Errno.ENOENT)) throw e; // nothing there to hide
        }
    }

    /** An opaque directory: what lower layers put in it goes, what this layer wrote stays. */
    private void emptyOfLowerContent(EntryPath dir) {
        Optional<Stat> stat;
        try {
            stat = root.lstat(dir.toString());
        } catch (LinuxException e) {
            if (e.is(Errno.ENOTDIR)) return;
            throw e;
        }
        if (stat.isEmpty() || !stat.get().isDirectory()) return;
        for (String name : root.names(dir.toString())) {
            EntryPath child = dir.child(name);
            if (!written.contains(child)) root.removeEntry(child.toString());
            else if (root.lstat(child.toString()).map(Stat::isDirectory).orElse(false)) emptyOfLowerContent(child);
        }
    }

    private void markWritten(EntryPath path) {
        for (EntryPath p = path; !p.isRoot() && written.add(p); p = p.parent()) {
            // the directories above it are this layer's too, as far as whiteouts go
        }
    }

    // --- attributes ---

    private FileOwner owner(TarEntry entry, String subject) {
        if (entry.uid() > MAX_ID || entry.gid() > MAX_ID)
            throw ImageException.refused(subject, "owner " + entry.uid() + ":" + entry.gid() + " is outside the ids 0-" + MAX_ID
                    + " a sandbox maps");
        return new FileOwner(sandboxRoot.uid() + (int) entry.uid(), sandboxRoot.gid() + (int) entry.gid());
    }

    private void setAttributes(EntryPath path, TarEntry entry, String subject, boolean symlink) {
        String p = path.toString();
        root.setOwner(p, owner(entry, subject));
        if (!symlink) root.setMode(p, entry.mode());
        setXattrs(path, entry, symlink);
    }

    private void setXattrs(EntryPath path, TarEntry entry, boolean symlink) {
        for (var x : entry.xattrs().entrySet()) {
            switch (XattrPolicy.decide(x.getKey(), x.getValue(), symlink, sandboxRoot)) {
                case XattrPolicy.Apply a -> {
                    try {
                        root.setXattr(path.toString(), a.name(), a.value());
                    } catch (LinuxException e) {
                        if (!e.is(Errno.EOPNOTSUPP)) throw e;
                        skip(path, a.name() + ": the filesystem does not take it");
                    }
                }
                case XattrPolicy.Skip s -> skip(path, x.getKey() + ": " + s.reason());
            }
        }
    }

    private void skip(EntryPath path, String reason) {
        skippedCount++;
        if (skipped.size() < MAX_SKIPPED_LISTED) skipped.add(new LayerApplier.Skipped(layer, path.toString(), reason));
        log.atDebug().addKeyValue("layer", layer).addKeyValue("path", path).addKeyValue("reason", reason).log("skipped");
    }

    private static ImageException failed(String subject, LinuxException e) {
        boolean host = e.is(Errno.ENOSPC) || e.is(Errno.EDQUOT) || e.is(Errno.EIO) || e.is(Errno.ENOMEM) || e.is(Errno.EMFILE)
                || e.is(Errno.ENFILE) || e.is(Errno.EROFS);
        String problem = e.problem().orElse(e.errnoName()) + " (" + e.syscall() + " " + e.path() + ")";
        return host ? ImageException.io(subject, "the host failed to apply it: " + problem, e)
                : new ImageException(ImageException.Reason.MALFORMED, subject, subject + ": cannot be applied: " + problem, e);
    }
}

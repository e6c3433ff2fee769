package io.stasis.storage.btrfs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Which subvolumes a root or a checkpoint's snapshot descends from: its own subvolume id first,
 * then the ids of the roots and snapshots it was branched from, nearest first. A root made from a
 * template has only its own: the template's files are the operator's, charged to nobody's limit.
 * Kept in a file next to the subvolume ({@code roots/<id>.lineage}, {@code checkpoints/<id>.lineage}),
 * one line of decimal ids, written to a temporary name and renamed into place, so a reader sees the
 * whole file or none. btrfs forgets a deleted subvolume's id, and its children know only a UUID;
 * this file is what lets {@link InheritedCharges} find who still holds what a deleted root wrote.
 * A subvolume without the file (a root made from a template, a received snapshot, one made before
 * lineages were recorded, one whose file was lost) is taken as descending from nothing
 * ({@link Lineages} keeps those not written yet).
 */
record Lineage(List<Long> ids) {
    /** The nearest ancestors kept: a chain of forks longer than this forgets the oldest. */
    static final int MAX_IDS = 1000;
    private static final String SUFFIX = ".lineage";

    Lineage {
        if (ids.isEmpty()) throw new IllegalArgumentException("a lineage names its own subvolume");
        for (long id : ids) if (id <= 0) throw new IllegalArgumentException("bad subvolume id " + id);
        ids = List.copyOf(ids.size() > MAX_IDS ? ids.subList(0, MAX_IDS) : ids);
    }

    static Lineage of(long self) {
        return new Lineage(List.of(self));
    }

    /** The lineage of subvolume {@code self}, branched from the one this lineage is of. */
    Lineage branch(long self) {
        var all = new ArrayList<Long>(ids.size() + 1);
        all.add(self);
        all.addAll(ids);
        return new Lineage(all);
    }

    long self() {
        return ids.getFirst();
    }

    /** How far {@code ancestor} is (1: the subvolume this one was branched from), or -1. */
    int distanceTo(long ancestor) {
        int at = ids.indexOf(ancestor);
        return at <= 0 ? -1 : at;
    }

    List<Long> ancestors() {
        return ids.subList(1, ids.size());
    }

    String encode() {
        return ids.stream().map(String::valueOf).collect(Collectors.joining(" ")) + "\n";
    }

    static Lineage decode(String text) {
        var ids = new ArrayList<Long>();
        for (String word : text.strip().split("\\s+")) ids.add(Long.parseLong(word));
        return new Lineage(ids);
    }

    static Path fileOf(Path subvolume) {
        return subvolume.resolveSibling(subvolume.getFileName() + SUFFIX);
    }

    /** The lineage written for {@code subvolume}; empty if there is none, or none readable. */
    static Optional<Lineage> read(Path subvolume) {
        try {
            return Optional.of(decode(Files.readString(fileOf(subvolume))));
        } catch (IOException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    void writeFor(Path subvolume) throws IOException {
        Path file = fileOf(subvolume);
        Path temp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(temp, encode());
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Moves the file of {@code from}, if there is one, to be {@code to}'s. */
    static void move(Path from, Path to) throws IOException {
        if (Files.exists(fileOf(from))) Files.move(fileOf(from), fileOf(to), StandardCopyOption.ATOMIC_MOVE);
    }

    static void deleteFor(Path subvolume) throws IOException {
        Files.deleteIfExists(fileOf(subvolume));
    }
}

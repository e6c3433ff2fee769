package io.stasis.storage.btrfs;

/**
 * A btrfs quota group, named {@code level/id} as the tools print it: {@code 0/<subvolume id>} is
 * the group btrfs keeps for every subvolume (and keeps after the subvolume is deleted, while
 * anything it wrote is still held: a "stale" group); level 1 groups are made by hand to hold
 * others, and their limit binds on the sum of their members.
 */
record Qgroup(int level, long id) implements Comparable<Qgroup> {
    private static final int LEVEL_SHIFT = 48;

    Qgroup {
        if (level < 0 || level > 0xffff) throw new IllegalArgumentException("bad qgroup level " + level);
        if (id < 0 || id >= 1L << LEVEL_SHIFT) throw new IllegalArgumentException("bad qgroup id " + id);
    }

    /** The group btrfs keeps for subvolume {@code subvolumeId}. */
    static Qgroup ofSubvolume(long subvolumeId) {
        return new Qgroup(0, subvolumeId);
    }

    /** The level 1 group named after subvolume {@code subvolumeId}. */
    static Qgroup aboveSubvolume(long subvolumeId) {
        return new Qgroup(1, subvolumeId);
    }

    /** The kernel's 64-bit form: the level in the top 16 bits. */
    long packed() {
        return ((long) level << LEVEL_SHIFT) | id;
    }

    static Qgroup unpacked(long packed) {
        return new Qgroup((int) (packed >>> LEVEL_SHIFT), packed & ((1L << LEVEL_SHIFT) - 1));
    }

    /** {@code 1/258}, or sysfs's {@code 1_258}. */
    static Qgroup parse(String text) {
        int at = Math.max(text.indexOf('/'), text.indexOf('_'));
        if (at <= 0) throw new IllegalArgumentException("not a qgroup: " + text);
        return new Qgroup(Integer.parseInt(text.substring(0, at)), Long.parseLong(text.substring(at + 1)));
    }

    @Override
    public int compareTo(Qgroup other) {
        return Long.compareUnsigned(packed(), other.packed());
    }

    @Override
    public String toString() {
        return level + "/" + id;
    }
}

package io.stasis.storage.btrfs;

import java.nio.file.Path;
import java.util.Set;

/**
 * Quota groups beyond a subvolume's own limit: the calls {@link InheritedCharges} makes to charge
 * what a deleted root wrote to a live one. Off the hot path (a background pass), so the CLI
 * ({@link Btrfs}) does as well as the ioctls ({@link BtrfsIoctl}), which implement it too. Each
 * call is made on the pool's top directory ({@code pool}), never inside a limited subvolume. Each
 * change is idempotent: making what exists or removing what is gone succeeds, so a pass cut short
 * is simply run again.
 */
interface Qgroups {
    /** The id of the subvolume whose root directory {@code subvolume} is: its group is {@code 0/id}. */
    long subvolumeId(Path subvolume);

    /** Makes {@code group} (a level 1 group) if it is not there. */
    void create(Path pool, Qgroup group);

    /** Removes {@code group} if it is there; it must have no members left. */
    void destroy(Path pool, Qgroup group);

    /** Makes {@code member} count in {@code parent}, whose usage then includes the member's. */
    void assign(Path pool, Qgroup member, Qgroup parent);

    /** Undoes {@link #assign}, if the relation is there. */
    void unassign(Path pool, Qgroup member, Qgroup parent);

    /** Sets {@code group}'s referenced and exclusive limits to {@code bytes}. */
    void limit(Path pool, Qgroup group, long bytes);

    /** Every member-of relation on the filesystem. */
    Set<Membership> memberships(Path pool);

    /** {@code member} counts in {@code parent}. */
    record Membership(Qgroup member, Qgroup parent) {
    }
}

package io.stasis.core.spi;

import java.util.List;

/**
 * The ids a process runs as inside its sandbox (the sandbox's own ids, 0-65535; root is 0), with
 * its supplementary groups.
 */
public record ProcessUser(int uid, int gid, List<Integer> groups) {
    public static final int MAX_ID = 65535;
    public static final int MAX_GROUPS = 64;

    public ProcessUser {
        groups = List.copyOf(groups);
        if (uid < 0 || uid > MAX_ID || gid < 0 || gid > MAX_ID || groups.size() > MAX_GROUPS
                || groups.stream().anyMatch(g -> g < 0 || g > MAX_ID))
            throw new IllegalArgumentException("ids must be 0-" + MAX_ID + " and at most " + MAX_GROUPS + " groups: " + uid + ":" + gid + " " + groups);
    }
}

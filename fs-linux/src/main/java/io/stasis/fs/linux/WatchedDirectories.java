package io.stasis.fs.linux;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The directories one watch has inotify watches on: watch descriptor to the directory's path
 * relative to the watch's base ({@code ""} is the base). The kernel identifies a directory by
 * inode, so when a directory moves its descriptors stay and only the paths here change.
 * Not thread-safe: owned by the watch.
 */
final class WatchedDirectories {
    private final Map<Integer, String> pathByWd = new HashMap<>();
    private final int limit;

    WatchedDirectories(int limit) {
        this.limit = limit;
    }

    int size() {
        return pathByWd.size();
    }

    int limit() {
        return limit;
    }

    boolean isFull() {
        return pathByWd.size() >= limit;
    }

    boolean contains(int wd) {
        return pathByWd.containsKey(wd);
    }

    /** The directory's path, or {@code null} when the descriptor is no longer (or never was) ours. */
    String path(int wd) {
        return pathByWd.get(wd);
    }

    void put(int wd, String path) {
        pathByWd.put(wd, path);
    }

    void forget(int wd) {
        pathByWd.remove(wd);
    }

    /** Forgets {@code path} and every directory inside it; returns their descriptors, for {@code inotify_rm_watch}. */
    List<Integer> removeTree(String path) {
        var removed = new ArrayList<Integer>();
        var it = pathByWd.entrySet().iterator();
        while (it.hasNext()) {
            var e = it.next();
            if (e.getValue().equals(path) || EventBatch.isInside(path, e.getValue())) {
                removed.add(e.getKey());
                it.remove();
            }
        }
        return removed;
    }

    /** Renames {@code from} and every directory inside it to live under {@code to}. */
    void moveTree(String from, String to) {
        for (var e : pathByWd.entrySet()) {
            String p = e.getValue();
            if (p.equals(from)) e.setValue(to);
            else if (EventBatch.isInside(from, p)) e.setValue(to + p.substring(from.length()));
        }
    }
}

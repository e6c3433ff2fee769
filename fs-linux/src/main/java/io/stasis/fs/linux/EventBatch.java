package io.stasis.fs.linux;

import io.stasis.core.files.FileEvent.Kind;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The changes of one delivery window, coalesced as they arrive while keeping their order:
 * <ul>
 *   <li>a {@code modify} after a {@code create} or {@code modify} of the same path is dropped
 *       (a write burst is one event; a new file's first content is part of its creation);</li>
 *   <li>a repeated {@code create} of a path is dropped (a directory's scan and the kernel's own
 *       events can both report an entry made right after the watch was added);</li>
 *   <li>{@code delete} drops the pending {@code modify}s of the path, and a {@code create} in the
 *       same window cancels out with it: nothing is reported (for a directory, only when no
 *       reported change inside it remains);</li>
 *   <li>moving a file created in the same window becomes one {@code create} at the destination
 *       (the write-then-rename pattern of editors and atomic writers).</li>
 * </ul>
 * Not thread-safe: owned by the watch's reader thread.
 */
final class EventBatch {
    /** Changes in arrival order; {@code null} where one was cancelled. */
    private final List<Change> changes = new ArrayList<>();
    /** For each path, the indices of live changes that leave something at that path, oldest first. */
    private final Map<String, ArrayDeque<Integer>> byPath = new HashMap<>();
    private int live;

    void add(Change change) {
        String path = change.path();
        switch (change.kind()) {
            case CREATE -> {
                if (lastKind(path) != Kind.CREATE) append(change);
            }
            case MODIFY -> {
                Kind last = lastKind(path);
                if (last != Kind.CREATE && last != Kind.MODIFY) append(change);
            }
            case DELETE -> {
                while (lastKind(path) == Kind.MODIFY) cancelLast(path);
                Integer created = lastIndex(path);
                if (created != null && changes.get(created).kind() == Kind.CREATE && !anyLiveInside(path, created)) {
                    cancelLast(path);
                    return; // created and deleted in one window: the caller never needs to know
                }
                append(change);
            }
            case MOVE -> {
                String from = change.from().orElseThrow();
                Integer created = lastIndex(from);
                if (created != null && changes.get(created).kind() == Kind.CREATE && !change.isDirectory()) {
                    cancelLast(from);
                    add(Change.of(Kind.CREATE, path, change.type()));
                    return;
                }
                append(change);
            }
        }
    }

    boolean isEmpty() {
        return live == 0;
    }

    /** Slots used, cancelled ones included: what bounds the memory of one window. */
    int slots() {
        return changes.size();
    }

    /** The live changes in order; the batch is empty afterwards. */
    List<Change> drain() {
        var out = new ArrayList<Change>(live);
        for (Change c : changes) if (c != null) out.add(c);
        changes.clear();
        byPath.clear();
        live = 0;
        return out;
    }

    private void append(Change change) {
        changes.add(change);
        byPath.computeIfAbsent(change.path(), p -> new ArrayDeque<>()).addLast(changes.size() - 1);
        live++;
    }

    private Integer lastIndex(String path) {
        var indices = byPath.get(path);
        return indices == null ? null : indices.peekLast();
    }

    private Kind lastKind(String path) {
        Integer i = lastIndex(path);
        return i == null ? null : changes.get(i).kind();
    }

    private void cancelLast(String path) {
        var indices = byPath.get(path);
        int i = indices.removeLast();
        if (indices.isEmpty()) byPath.remove(path);
        changes.set(i, null);
        live--;
    }

    /** Whether a live change after {@code after} concerns something inside directory {@code path}. */
    private boolean anyLiveInside(String path, int after) {
        for (int i = after + 1; i < changes.size(); i++) {
            Change c = changes.get(i);
            if (c != null && (isInside(path, c.path()) || c.from().map(f -> isInside(path, f)).orElse(false))) return true;
        }
        return false;
    }

    /** Whether {@code candidate} lies strictly inside directory {@code dir} (both relative, {@code ""} the base). */
    static boolean isInside(String dir, String candidate) {
        if (dir.isEmpty()) return !candidate.isEmpty();
        return candidate.length() > dir.length() && candidate.startsWith(dir) && candidate.charAt(dir.length()) == '/';
    }
}

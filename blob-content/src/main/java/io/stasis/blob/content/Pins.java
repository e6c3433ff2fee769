package io.stasis.blob.content;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Keys that uploads in flight depend on, and the one place where an upload and the GC meet.
 *
 * <p>An upload pins a chunk's key <em>before</em> it asks whether the chunk exists, and unpins it
 * only after its manifest is written. The GC deletes through {@link #deleteIfUnpinned}, which,
 * under the same per-key lock as {@link #pin}, refuses a key that is pinned now or was pinned at
 * any moment since the collection began (its {@link Recording}). So for every key exactly one of
 * two orders holds: the delete came first, and the upload's existence check that follows sees no
 * chunk and uploads it again; or the pin came first, and the GC spares the key.
 *
 * <p>Why "since the collection began" and not only "now": an upload may pin a chunk, finish and
 * unpin it after the GC listed the manifests, so its new manifest was not marked, and before the
 * GC reaches the chunk.
 */
final class Pins {
    private static final int STRIPES = 64;

    private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
    @SuppressWarnings("unchecked")
    private final Map<String, Integer>[] counts = new Map[STRIPES];
    private final CopyOnWriteArrayList<Recording> recordings = new CopyOnWriteArrayList<>();

    Pins() {
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new ReentrantLock();
            counts[i] = new HashMap<>();
        }
    }

    void pin(String key) {
        int s = stripe(key);
        locks[s].lock();
        try {
            counts[s].merge(key, 1, Integer::sum);
            for (Recording r : recordings) r.keys.add(key);
        } finally {
            locks[s].unlock();
        }
    }

    void unpin(String key) {
        int s = stripe(key);
        locks[s].lock();
        try {
            counts[s].computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
        } finally {
            locks[s].unlock();
        }
    }

    boolean isPinned(String key) {
        int s = stripe(key);
        locks[s].lock();
        try {
            return counts[s].containsKey(key);
        } finally {
            locks[s].unlock();
        }
    }

    /** Starts remembering every key pinned from now on, and holds the keys pinned now. */
    Recording record() {
        var recording = new Recording();
        recordings.add(recording);
        for (int s = 0; s < STRIPES; s++) {
            locks[s].lock();
            try {
                recording.keys.addAll(counts[s].keySet());
            } finally {
                locks[s].unlock();
            }
        }
        return recording;
    }

    /**
     * Runs {@code delete} unless {@code key} is pinned or was pinned during {@code recording};
     * while it runs, nobody can pin the key.
     *
     * @return whether it ran
     */
    boolean deleteIfUnpinned(Recording recording, String key, Runnable delete) {
        int s = stripe(key);
        locks[s].lock();
        try {
            if (counts[s].containsKey(key) || recording.keys.contains(key)) return false;
            delete.run();
            return true;
        } finally {
            locks[s].unlock();
        }
    }

    private static int stripe(String key) {
        return Math.floorMod(key.hashCode(), STRIPES);
    }

    /** The keys pinned while a collection runs. Close it when the collection ends. */
    final class Recording implements AutoCloseable {
        private final Set<String> keys = ConcurrentHashMap.newKeySet();

        @Override
        public void close() {
            recordings.remove(this);
        }
    }
}

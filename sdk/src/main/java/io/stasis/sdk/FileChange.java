package io.stasis.sdk;

import java.util.Locale;

/**
 * One change seen by a {@link FileWatch}.
 *
 * @param kind     what happened
 * @param path     the entry it happened to, as the sandbox sees it (for {@link Kind#MOVE}: where it
 *                 is now; for {@link Kind#OVERFLOW}: the watched path, to rescan)
 * @param fileType what the entry is; null for {@link Kind#OVERFLOW}
 * @param from     for {@link Kind#MOVE} from inside the watched tree: where it was; else null (a
 *                 move in from outside is a move without {@code from})
 */
public record FileChange(Kind kind, String path, FileType fileType, String from) {
    /** What happened to an entry. */
    public enum Kind {
        CREATE, MODIFY, DELETE, MOVE,
        /**
         * The kernel dropped events (too many too fast): changes were missed, the watch has ended,
         * and the caller should rescan the tree.
         */
        OVERFLOW;

        /** The SSE event name: {@code create}, {@code modify}... */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The kind with this event name, or null for one this SDK does not know. */
        static Kind fromWire(String name) {
            for (Kind kind : values()) {
                if (kind.wireName().equals(name)) return kind;
            }
            return null;
        }
    }

    @Override
    public String toString() {
        return kind.wireName() + " " + path + (from == null ? "" : " <- " + from);
    }
}

package io.stasis.core.files;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A change under a watched path, as the sandbox sees it.
 *
 * @param path the sandbox path it concerns ({@code /root/a.txt})
 * @param from for a move, where it came from (when the move started inside the watched tree)
 * @param type what the entry is (for a deletion, what it was when known, else {@code file})
 */
public record FileEvent(Kind kind, String path, Optional<String> from, FileType type) {
    public enum Kind {
        CREATE, MODIFY, DELETE, MOVE;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public FileEvent {
        Objects.requireNonNull(kind);
        Objects.requireNonNull(path);
        Objects.requireNonNull(from);
        Objects.requireNonNull(type);
    }
}

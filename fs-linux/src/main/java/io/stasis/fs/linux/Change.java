package io.stasis.fs.linux;

import io.stasis.core.files.FileEvent.Kind;
import io.stasis.core.files.FileType;
import java.util.Objects;
import java.util.Optional;

/**
 * One change seen by a watch, before coalescing and before it becomes a {@code FileEvent}.
 *
 * @param path where it happened, relative to the watch's base directory ({@code ""} is the base itself)
 * @param from for a {@link Kind#MOVE}, where it came from (relative too); empty otherwise
 * @param type what the entry is when known for sure (a directory from {@code IN_ISDIR}, a scan's
 *             {@code d_type}); empty: not a directory, looked up when the batch is delivered
 */
record Change(Kind kind, String path, Optional<String> from, Optional<FileType> type) {
    Change {
        Objects.requireNonNull(kind);
        Objects.requireNonNull(path);
        Objects.requireNonNull(from);
        Objects.requireNonNull(type);
        if ((kind == Kind.MOVE) != from.isPresent()) throw new IllegalArgumentException("a move, and only a move, has a source");
    }

    static Change of(Kind kind, String path, Optional<FileType> type) {
        return new Change(kind, path, Optional.empty(), type);
    }

    static Change move(String from, String to, Optional<FileType> type) {
        return new Change(Kind.MOVE, to, Optional.of(from), type);
    }

    boolean isDirectory() {
        return type.orElse(null) == FileType.DIRECTORY;
    }
}

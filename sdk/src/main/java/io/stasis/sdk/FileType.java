package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** What a file entry is. Anything this SDK does not know is {@link #OTHER}. */
public enum FileType {
    FILE, DIR, SYMLINK, OTHER;

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static FileType fromWire(String value) {
        if (value == null) return OTHER;
        return switch (value) {
            case "file" -> FILE;
            case "dir", "directory" -> DIR; // "directory": early drafts of the watch events
            case "symlink" -> SYMLINK;
            default -> OTHER;
        };
    }
}

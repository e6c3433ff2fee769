package io.stasis.core.files;

/** The kind of a directory entry, named for the wire: {@code file}, {@code dir}, {@code symlink}, {@code other}. */
public enum FileType {
    FILE("file"), DIRECTORY("dir"), SYMLINK("symlink"), OTHER("other");

    private final String wireName;

    FileType(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}

package io.stasis.testkit.fake;

/**
 * One entry of a directory tree as the fakes copy and stream it: what a btrfs snapshot keeps of
 * it too, less times, hard links and extended attributes.
 *
 * @param path relative to the tree's top, {@code ""} for the top itself, {@code /} between names
 * @param mode the permission bits with setuid, setgid and sticky ({@code 07777})
 * @param linkTarget what a symlink points at, {@code null} for anything else
 */
record TreeEntry(String path, Kind kind, int mode, int uid, int gid, String linkTarget) {

    enum Kind { DIRECTORY, FILE, LINK }
}

package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a sandbox leaves in its root: other users' files, read-only files and directories. */
@Tag("root")
class FileTreesIT {
    @TempDir
    Path dir;

    @Test
    void rootDeletesReadOnlyAndForeignFilesAndDirectories() throws Exception {
        Path tree = Files.createDirectories(dir.resolve("tree"));
        Path locked = Files.createDirectories(tree.resolve("home/u/locked"));
        Files.writeString(locked.resolve("f"), "x");
        Files.setAttribute(locked.resolve("f"), "unix:uid", 123456);
        Files.setAttribute(locked.resolve("f"), "unix:gid", 123456);
        Files.setPosixFilePermissions(locked.resolve("f"), Set.of());
        Path readOnly = Files.createDirectories(tree.resolve("etc"));
        Files.writeString(readOnly.resolve("hostname"), "sandbox\n");
        Files.setPosixFilePermissions(readOnly.resolve("hostname"), PosixFilePermissions.fromString("r--r--r--"));
        Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("r-xr-xr-x"));
        Files.setAttribute(locked, "unix:uid", 123456);
        Files.setPosixFilePermissions(locked, Set.of());
        Path emptyLocked = Files.createDirectories(tree.resolve("empty-locked"));
        Files.setPosixFilePermissions(emptyLocked, Set.of());

        assertThat(FileTrees.deleteContents(tree.resolve("home"))).isTrue();
        assertThat(tree.resolve("home")).isEmptyDirectory();
        assertThat(FileTrees.deleteRecursively(tree)).isTrue();
        assertThat(Files.exists(tree, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }
}

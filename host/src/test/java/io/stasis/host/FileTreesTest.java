package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileTreesTest {
    @TempDir
    Path dir;
    Path outside;
    Path tree;

    /** A tree with links out of it: to a file, to a directory, dangling, and one looping back. */
    @BeforeEach
    void makeTree() throws Exception {
        outside = Files.createDirectories(dir.resolve("outside/sub"));
        Files.writeString(outside.resolve("keep"), "host file");
        tree = Files.createDirectories(dir.resolve("tree"));
        Files.createDirectories(tree.resolve("a/b/c"));
        Files.writeString(tree.resolve("a/b/c/f"), "x");
        Files.writeString(tree.resolve("top"), "y");
        Files.createSymbolicLink(tree.resolve("a/to-file"), outside.resolve("keep"));
        Files.createSymbolicLink(tree.resolve("a/to-dir"), outside);
        Files.createSymbolicLink(tree.resolve("a/b/dangling"), Path.of("/nonexistent/stasis"));
        Files.createSymbolicLink(tree.resolve("a/b/loop"), Path.of(".."));
    }

    @Test
    void deletesTheTreeButNothingItsLinksPointAt() throws Exception {
        assertThat(FileTrees.deleteRecursively(tree)).isTrue();
        assertThat(Files.exists(tree, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(outside.resolve("keep")).hasContent("host file");
        assertThat(outside).isDirectory();
    }

    @Test
    void aVanishedTreeIsNotAnError() throws Exception {
        assertThat(FileTrees.deleteRecursively(dir.resolve("never-was"))).isFalse();
        assertThat(FileTrees.deleteContents(dir.resolve("never-was"))).isFalse();
        assertThat(FileTrees.deleteRecursively(tree)).isTrue();
        assertThat(FileTrees.deleteRecursively(tree)).isFalse();
    }

    @Test
    void aLinkAsTheRootIsDeletedAloneAndIsNotADirectoryToEmpty() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("link"), outside);
        assertThatThrownBy(() -> FileTrees.deleteContents(link)).isInstanceOf(NotDirectoryException.class);
        assertThat(FileTrees.deleteRecursively(link)).isTrue();
        assertThat(Files.exists(link, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(outside.resolve("keep")).hasContent("host file");
    }

    @Test
    void deleteContentsKeepsTheDirectoryItself() throws Exception {
        assertThat(FileTrees.deleteContents(tree)).isTrue();
        assertThat(tree).isDirectory().isEmptyDirectory();
        assertThat(outside.resolve("keep")).hasContent("host file");
        assertThatThrownBy(() -> FileTrees.deleteContents(outside.resolve("keep"))).isInstanceOf(NotDirectoryException.class);
    }
}

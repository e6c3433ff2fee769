package io.stasis.blob.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.spi.BlobStore;
import io.stasis.testkit.BlobStoreSuite;
import java.io.ByteArrayInputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The BlobStore contract on a directory, and what only a directory has: temporaries and directories. */
class LocalBlobStoreTest extends BlobStoreSuite {
    @TempDir
    Path dir;

    @Override
    protected BlobStore newStore() {
        return new LocalBlobStore(dir.resolve("blobs"));
    }

    private LocalBlobStore local() {
        return (LocalBlobStore) store();
    }

    @Test
    void anObjectIsAFileUnderItsKey() throws Exception {
        store().put("chunks/ab/abc", bytes("content"));
        assertThat(Files.readString(local().root().resolve("chunks/ab/abc"))).isEqualTo("content");
    }

    @Test
    void aFailedPutLeavesNoTemporary() throws Exception {
        assertThatThrownBy(() -> store().put("x", new ByteArrayInputStream(new byte[5]), 10)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("ended after 5 of 10 bytes");
        try (var left = Files.list(local().root().resolve(".tmp"))) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void temporariesOfDeadWritersAreReapedOnOpenAndNeverListed() throws Exception {
        Path temp = local().root().resolve(".tmp");
        long deadPid = ProcessHandle.current().pid() + 4_000_000; // above any pid_max
        Path dead = Files.writeString(temp.resolve(deadPid + "-0f0e-1.tmp"), "half");
        Path alive = Files.writeString(temp.resolve(ProcessHandle.current().pid() + "-0f0e-2.tmp"), "in flight");
        assertThat(store().list("", Optional.empty(), 10).blobs()).isEmpty();

        try (var reopened = new LocalBlobStore(local().root())) {
            assertThat(dead).doesNotExist();
            assertThat(alive).exists();
            assertThat(reopened.list("", Optional.empty(), 10).blobs()).isEmpty();
        }
    }

    @Test
    void filesNotMadeByAPutAreIgnored() throws Exception {
        Files.writeString(local().root().resolve(".hidden"), "x");
        Files.writeString(local().root().resolve("has space"), "x");
        store().put("real", bytes("x"));
        assertThat(store().listAll("").map(i -> i.key()).toList()).containsExactly("real");
    }

    @Test
    void aKeyThatIsADirectoryOfAnotherIsNoObjectAndCannotBePut() {
        store().put("a/b", bytes("x"));
        assertThat(store().exists("a")).isFalse();
        assertThat(store().get("a")).isEmpty();
        store().delete("a");
        assertThat(store().exists("a/b")).isTrue();
        assertThatThrownBy(() -> store().put("a", bytes("y"))).isInstanceOf(UncheckedIOException.class);
        assertThatThrownBy(() -> store().put("a/b/c", bytes("y"))).isInstanceOf(UncheckedIOException.class);
        assertThat(store().exists("a/b/c")).isFalse();
    }
}

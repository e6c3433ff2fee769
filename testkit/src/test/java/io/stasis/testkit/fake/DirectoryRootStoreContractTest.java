package io.stasis.testkit.fake;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RootStore;
import io.stasis.host.FileTrees;
import io.stasis.testkit.RootStoreSuite;
import io.stasis.testkit.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The RootStore contract on plain directories, and what only the fake has: the limits it remembers. */
class DirectoryRootStoreContractTest extends RootStoreSuite {
    @TempDir
    Path dir;

    /** As root, files of another user, as the real store has them; otherwise the user's own. */
    @Override
    protected FileOwner owner() {
        var user = TestFiles.currentUser();
        return user.uid() == 0 ? new FileOwner(100000, 100000) : user;
    }

    /** Before @TempDir's own deletion, which warns about every link to a host file (templates have one). */
    @AfterEach
    void deleteStores() throws IOException {
        FileTrees.deleteContents(dir);
    }

    @Override
    protected RootStore newStore() {
        try {
            return new DirectoryRootStore(Files.createTempDirectory(dir, "store"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private DirectoryRootStore fake() {
        return (DirectoryRootStore) store();
    }

    @Test
    void theLastDiskLimitGivenIsRemembered() {
        var id = SandboxId.random();
        assertThat(fake().diskLimit(id)).isEmpty();
        fake().createRoot(id, TEMPLATE, 1000);
        assertThat(fake().diskLimit(id)).hasValue(1000);
        fake().limitRoot(id, 2000);
        assertThat(fake().diskLimit(id)).hasValue(2000);
        fake().deleteRoot(id);
        assertThat(fake().diskLimit(id)).isEmpty();
    }
}

package io.stasis.testkit.fake;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.VolumeStore;
import io.stasis.core.volume.VolumeId;
import io.stasis.host.FileTrees;
import io.stasis.testkit.VolumeStoreSuite;
import io.stasis.testkit.TestFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The VolumeStore contract on plain directories, and what only the fake has: the limits it remembers. */
class DirectoryVolumeStoreContractTest extends VolumeStoreSuite {
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
    protected VolumeStore newStore() {
        try {
            return new DirectoryVolumeStore(Files.createTempDirectory(dir, "store"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theSizeLimitAVolumeWasMadeWithIsRemembered() {
        var fake = (DirectoryVolumeStore) store();
        var id = VolumeId.random();
        fake.create(id, 1000, owner());
        assertThat(fake.sizeLimit(id)).hasValue(1000);
        fake.delete(id);
        assertThat(fake.sizeLimit(id)).isEmpty();
    }
}

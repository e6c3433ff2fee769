package io.stasis.core.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The volume sync record is read by every instance sharing a blob store, including older and
 * newer ones: its bytes are pinned by a golden file ({@code volume-sync-records/v1.txt}). A change
 * of them is a new format version; {@code -Dstasis.golden.write=true} writes the file anew.
 */
class VolumeSyncRecordTest {
    private static final Path GOLDEN = Path.of("src", "test", "resources", "volume-sync-records", "v1.txt");

    private static VolumeSync sync(Optional<VolumeSyncId> parent) {
        return new VolumeSync(new VolumeSyncId("vsync_golden0000000002"), new VolumeId("vol_golden0000000001"), "datasets", 256,
                List.of("a".repeat(64), "b".repeat(64)), parent, "vsync_golden0000000002", 123_456, Instant.parse("2026-11-29T10:00:00Z"));
    }

    @Test
    void writesVersion1ExactlyAndReadsItBack() throws IOException {
        var sync = sync(Optional.of(new VolumeSyncId("vsync_golden0000000001")));
        byte[] encoded = VolumeSyncRecord.encode(sync);
        if (Boolean.getBoolean("stasis.golden.write")) Files.write(GOLDEN, encoded);
        assertThat(new String(encoded, StandardCharsets.UTF_8)).isEqualTo(Files.readString(GOLDEN));
        assertThat(VolumeSyncRecord.decode(Files.readAllBytes(GOLDEN))).isEqualTo(sync);
    }

    @Test
    void aFirstSyncHasNoParent() {
        var first = sync(Optional.empty());
        assertThat(VolumeSyncRecord.decode(VolumeSyncRecord.encode(first))).isEqualTo(first);
    }

    @Test
    void somethingElseIsAnInternalError() {
        assertThatThrownBy(() -> VolumeSyncRecord.decode("format=1\nid=nonsense\n".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
    }
}

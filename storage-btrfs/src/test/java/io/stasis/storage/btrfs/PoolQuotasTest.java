package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PoolQuotas}' decision table against a sysfs tree written by the test, for the kernels
 * this machine is not (before 6.7: no {@code features/simple_quota}, no {@code qgroups/mode}).
 * {@code BtrfsDiskLimitIT} runs the same decisions against the real kernel.
 */
class PoolQuotasTest {
    private static final String FSID = "9468f0e8-7baf-45ba-bfe5-db5d7cca1d37";
    private static final Path POOL = Path.of("/pool");

    @TempDir
    Path sysfs;

    @Test
    void aKernelWithoutSimpleQuotasGetsFullOnesAndNothingIsTurnedOff() throws IOException {
        var kernel = new Kernel(null); // quotas off
        var outcome = PoolQuotas.enable(kernel, POOL, sysfs);
        assertThat(kernel.calls).containsExactly("enable");
        assertThat(outcome.mode()).isEqualTo("qgroup"); // no mode file: full accounting
        assertThat(outcome.fallback()).hasValueSatisfying(reason -> assertThat(reason).contains("6.7"));

        var again = PoolQuotas.enable(kernel, POOL, sysfs); // full quotas on already: left as they are
        assertThat(kernel.calls).containsExactly("enable", "enable");
        assertThat(again.switched()).isFalse();
    }

    @Test
    void fullQuotasAreSwitchedThroughOffWhereTheKernelHasSimpleOnes() throws IOException {
        Files.createDirectories(sysfs.resolve("features"));
        Files.writeString(sysfs.resolve("features/simple_quota"), "0\n");
        var kernel = new Kernel("qgroup");
        var outcome = PoolQuotas.enable(kernel, POOL, sysfs);
        assertThat(kernel.calls).containsExactly("disable", "enableSimple");
        assertThat(outcome.mode()).isEqualTo("squota");
        assertThat(outcome.switched()).isTrue();
        assertThat(outcome.fallback()).isEmpty();

        var again = PoolQuotas.enable(kernel, POOL, sysfs);
        assertThat(kernel.calls).containsExactly("disable", "enableSimple"); // squota: nothing to do
        assertThat(again.switched()).isFalse();
    }

    @Test
    void whenNeitherModeCanBeTurnedOnTheErrorSaysWhyForBoth() throws IOException {
        var kernel = new Kernel(null);
        kernel.refuseFull = true;
        assertThatThrownBy(() -> PoolQuotas.enable(kernel, POOL, sysfs)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
            assertThat(e.getMessage()).contains("disk limits need them").contains("simple quotas: this kernel has no simple quotas");
            assertThat(e.details()).containsEntry("pool", POOL.toString());
        });
    }

    /** Quota calls of a kernel, mirrored in the sysfs tree as the real one shows them. */
    private final class Kernel implements Subvolumes {
        final List<String> calls = new ArrayList<>();
        boolean refuseFull;

        Kernel(String mode) throws IOException {
            if (mode != null) show(mode);
        }

        private void show(String mode) {
            try {
                Path qgroups = Files.createDirectories(sysfs.resolve(FSID).resolve("qgroups"));
                boolean hasModes = Files.exists(sysfs.resolve("features/simple_quota"));
                if (hasModes) Files.writeString(qgroups.resolve("mode"), mode + "\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void enableSimpleQuotas(Path anyPath) {
            calls.add("enableSimple");
            if (!Files.exists(sysfs.resolve(FSID).resolve("qgroups"))) show("squota");
        }

        @Override
        public void enableQuotas(Path anyPath) {
            calls.add("enable");
            if (refuseFull) throw new StasisException(ErrorCode.RUNTIME_FAILED, "btrfs quota enable failed: errno 1", Map.of("step", "btrfs quota enable"), null);
            if (!Files.exists(sysfs.resolve(FSID).resolve("qgroups"))) show("qgroup");
        }

        @Override
        public void disableQuotas(Path anyPath) {
            calls.add("disable");
            try {
                Files.deleteIfExists(sysfs.resolve(FSID).resolve("qgroups/mode"));
                Files.deleteIfExists(sysfs.resolve(FSID).resolve("qgroups"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public boolean canEnableSimpleQuotas() {
            return true;
        }

        @Override
        public Optional<String> filesystemId(Path anyPath) {
            return Optional.of(FSID);
        }

        @Override
        public void create(Path path) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void snapshot(Path source, Path target, boolean readOnly) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void delete(Path path) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void sync(Path anyPath) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void limit(Path subvolume, long bytes) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String kind() {
            return "sysfs written by the test";
        }
    }
}

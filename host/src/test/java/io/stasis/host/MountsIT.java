package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("root")
class MountsIT {
    private final Mounts mounts = Mounts.fromSystem();

    @TempDir
    Path dir;

    @AfterEach
    void noMountsLeft() throws Exception {
        mounts.unmountAllBelow(dir); // even when the test failed: never delete through a mount
        assertThat(MountInfo.read().atOrBelow(dir.toRealPath())).isEmpty();
    }

    @Test
    void unmountsNestedAndStackedMountsDeepestFirst() throws Exception {
        Path proc = Files.createDirectories(dir.resolve("target/proc"));
        Path tmp = Files.createDirectories(dir.resolve("target/with space/tmp"));
        mounts.mount("proc", "proc", proc, List.of());
        mounts.mount("tmpfs", "none", tmp, List.of("size=1m", "mode=0755"));
        assertThat(MountInfo.read().at(tmp.toRealPath()).orElseThrow().superOptions()).contains("size=1024k", "mode=755");
        mounts.mount("tmpfs", "none", tmp, List.of()); // stacked on the first
        Path inner = Files.createDirectories(tmp.resolve("inner"));
        mounts.mount("tmpfs", "none", inner, List.of());
        assertThat(MountInfo.read().atOrBelow(dir.toRealPath())).hasSize(4);

        var unmounted = mounts.unmountAllBelow(dir.resolve("target"));
        assertThat(unmounted).hasSize(4);
        assertThat(MountInfo.read().atOrBelow(dir.toRealPath())).isEmpty();
        assertThat(mounts.unmountAllBelow(dir.resolve("target"))).isEmpty();
    }

    @Test
    void aBusyMountFailsAPlainUnmountAndIsDetachedLazilyBelowATree() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("tree/tmp"));
        mounts.mount("tmpfs", "none", tmp, List.of());
        try (var open = FileChannel.open(tmp.resolve("held"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            assertThatThrownBy(() -> mounts.unmount(tmp)).isInstanceOfSatisfying(StasisException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
                assertThat(e.getMessage()).startsWith("umount " + tmp + " failed: exit ").contains("busy");
                assertThat(e.details()).containsEntry("step", "umount").containsEntry("target", tmp.toString()).containsKey("stderr");
            });
            assertThat(MountInfo.read().at(tmp.toRealPath())).isPresent();

            assertThat(mounts.unmountAllBelow(dir.resolve("tree"))).containsExactly(tmp.toRealPath());
            assertThat(MountInfo.read().atOrBelow(dir.toRealPath())).isEmpty();
            assertThat(open.isOpen()).isTrue(); // a lazy detach leaves open files working until they close
        }
    }

    @Test
    void mountsAnImageThroughAnAutoclearLoopDevice() throws Exception {
        Path image = dir.resolve("fs.img");
        try (var file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength(16L << 20);
        }
        var mkfs = ToolRunner.run(List.of(ToolRunner.locate("mkfs.ext4").toString(), "-q", "-F", image.toString()), Duration.ofSeconds(60));
        assertThat(mkfs.exitCode()).as(mkfs.stderrTail()).isZero();
        Path target = Files.createDirectory(dir.resolve("mnt"));

        mounts.mountLoopImage("ext4", image, target, List.of("noatime"));
        var entry = MountInfo.read().at(target.toRealPath()).orElseThrow();
        assertThat(entry.fsType()).isEqualTo("ext4");
        assertThat(entry.source()).startsWith("/dev/loop");
        Path device = Path.of(entry.source());
        mounts.unmount(target);
        assertThat(MountInfo.read().at(target.toRealPath())).isEmpty();
        assertThat(backingFile(device)).as("autoclear detached " + device).doesNotContain(image.toString());
    }

    @Test
    void aFailedMountQuotesTheToolsMessage() throws Exception {
        Path target = Files.createDirectory(dir.resolve("mnt"));
        assertThatThrownBy(() -> mounts.mount("stasis-no-such-fs", "none", target, List.of()))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.getMessage()).startsWith("mount " + target + " failed: exit ");
                    assertThat(e.details()).containsEntry("step", "mount").containsEntry("target", target.toString());
                    assertThat((String) e.details().get("stderr")).isNotEmpty();
                });
        assertThatThrownBy(() -> mounts.unmount(target)).isInstanceOf(StasisException.class).hasMessageContaining("not mounted");
    }

    /** The loop device's backing file, or "" once it is detached; autoclear acts when the last reference goes. */
    private static String backingFile(Path device) throws Exception {
        Path backing = Path.of("/sys/block").resolve(device.getFileName()).resolve("loop/backing_file");
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (Files.isReadable(backing) && System.nanoTime() < deadline) LockSupport.parkNanos(10_000_000);
        return Files.isReadable(backing) ? Files.readString(backing) : "";
    }
}

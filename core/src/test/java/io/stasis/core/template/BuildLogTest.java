package io.stasis.core.template;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class BuildLogTest {
    @Test
    void offsetsCountFromTheFirstByteAndTheOldestBytesGoPastTheCapacity() {
        var log = new BuildLog(8);
        log.append("abcdef".getBytes(StandardCharsets.UTF_8));
        var first = log.read(0, 100);
        assertThat(new String(first.data(), StandardCharsets.UTF_8)).isEqualTo("abcdef");
        assertThat(first.next()).isEqualTo(6);
        log.append("ghijk".getBytes(StandardCharsets.UTF_8));
        var wrapped = log.read(0, 100);
        assertThat(wrapped.start()).isEqualTo(3); // a..c were dropped
        assertThat(new String(wrapped.data(), StandardCharsets.UTF_8)).isEqualTo("defghijk");
        assertThat(log.read(9, 100).data()).hasSize(2);
        assertThat(log.read(11, 100).data()).isEmpty();
        assertThat(wrapped.done()).isFalse();
        log.finish();
        assertThat(log.read(11, 100).done()).isTrue();
        assertThat(log.tail(3)).isEqualTo("ijk");
    }

    @Test
    void aCharacterCutByASliceWaitsForTheNextRead() {
        var log = new BuildLog(1024);
        byte[] text = "é€".getBytes(StandardCharsets.UTF_8); // 2 + 3 bytes
        log.append(Arrays.copyOf(text, 3)); // é and the first byte of €
        var slice = log.read(0, 100);
        assertThat(new String(slice.data(), StandardCharsets.UTF_8)).isEqualTo("é");
        assertThat(slice.next()).isEqualTo(2);
        assertThat(log.read(0, 4).data()).hasSize(2);
        log.append(Arrays.copyOfRange(text, 3, 5));
        assertThat(new String(log.read(slice.next(), 100).data(), StandardCharsets.UTF_8)).isEqualTo("€");
        assertThat(BuildLog.incompleteTail(new byte[] {'a'})).isZero();
        assertThat(BuildLog.incompleteTail(new byte[] {(byte) 0xf0, (byte) 0x9f, (byte) 0x98})).isEqualTo(3);
    }

    @Test
    void awaitReturnsWhenBytesArriveOrTheBuildEnds() throws Exception {
        var log = new BuildLog(1024);
        var writer = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            log.line("late");
            log.finish();
        });
        var slice = log.await(0, 100, Duration.ofSeconds(10));
        assertThat(new String(slice.data(), StandardCharsets.UTF_8)).isEqualTo("late\n");
        writer.join();
        assertThat(log.await(slice.next(), 100, Duration.ofSeconds(10)).done()).isTrue();
    }
}

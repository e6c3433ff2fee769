package io.stasis.fs.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class SizeLimitedInputStreamTest {

    @Test
    void passesContentUpToTheLimit() throws IOException {
        var in = SizeLimitedInputStream.forPath(new ByteArrayInputStream(new byte[10]), 10, "/a");

        assertThat(in.readAllBytes()).hasSize(10);
    }

    @Test
    void failsWithPayloadTooLargeOneBytePastTheLimit() {
        var in = SizeLimitedInputStream.forPath(new ByteArrayInputStream(new byte[11]), 10, "/a");

        assertThatThrownBy(in::readAllBytes).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.PAYLOAD_TOO_LARGE);
            assertThat(e.getMessage()).contains("/a").contains("10 bytes");
        });
    }

    @Test
    void countsSingleByteReadsToo() throws IOException {
        var in = SizeLimitedInputStream.forPath(new ByteArrayInputStream(new byte[3]), 2, "/a");

        in.read();
        in.read();
        assertThatThrownBy(in::read).isInstanceOf(StasisException.class);
    }
}

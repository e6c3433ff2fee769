package io.stasis.core.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class FileContentTest {
    private static final byte[] GROWN = "0123456789".getBytes();

    @Test
    void aFileThatGrewSinceItWasOpenedIsReadUpToItsSizeThen() throws IOException {
        try (var content = new FileContent(6, new ByteArrayInputStream(GROWN))) {
            var out = new ByteArrayOutputStream();
            assertThat(content.stream().transferTo(out)).isEqualTo(6);
            assertThat(out.toString()).isEqualTo("012345");
            assertThat(content.stream().read()).isEqualTo(-1);
        }
        try (var content = new FileContent(3, new ByteArrayInputStream(GROWN))) {
            assertThat(content.stream().skip(2)).isEqualTo(2);
            assertThat(content.stream().read()).isEqualTo('2');
            assertThat(content.stream().read(new byte[4], 0, 4)).isEqualTo(-1);
        }
    }

    @Test
    void aFileThatShrankEndsWhereItEnds() throws IOException {
        try (var content = new FileContent(20, new ByteArrayInputStream(GROWN))) {
            assertThat(content.stream().readAllBytes()).isEqualTo(GROWN);
        }
    }
}

package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The subvolume name read from a send stream's first command; real streams: RootStoreSuite on btrfs. */
class SendStreamHeaderTest {
    private static final int SUBVOL = 1;
    private static final int SNAPSHOT = 2;
    private static final int UUID = 1;
    private static final int PATH = 15;

    @Test
    void theNameOfAFullOrAnIncrementalStreamIsItsFirstCommandsPath() throws Exception {
        assertThat(SendStreamHeader.subvolumeName(stream(SUBVOL, attribute(PATH, "ckpt_one"), attribute(UUID, new byte[16]))))
                .contains("ckpt_one");
        assertThat(SendStreamHeader.subvolumeName(stream(SNAPSHOT, attribute(UUID, new byte[16]), attribute(PATH, "ckpt_two"))))
                .contains("ckpt_two");
    }

    @Test
    void readingTheNameLeavesTheStreamWhole() throws Exception {
        var rest = new byte[10_000];
        Arrays.fill(rest, (byte) 7);
        var whole = new ByteArrayOutputStream();
        whole.writeBytes(stream(SUBVOL, attribute(PATH, "ckpt_one")));
        whole.writeBytes(rest); // the commands that follow
        byte[] bytes = whole.toByteArray();
        var in = new BufferedInputStream(new ByteArrayInputStream(bytes), SendStreamHeader.PEEK_BYTES);
        assertThat(SendStreamHeader.subvolumeName(in)).contains("ckpt_one");
        assertThat(in.readAllBytes()).isEqualTo(bytes);
    }

    @Test
    void whatDoesNotBeginAsASendStreamOfASubvolumeHasNoName() {
        byte[] full = stream(SUBVOL, attribute(PATH, "ckpt_one"));
        assertThat(SendStreamHeader.subvolumeName(new byte[0])).isEmpty();
        assertThat(SendStreamHeader.subvolumeName("not a stream at all, but long enough".getBytes(StandardCharsets.US_ASCII))).isEmpty();
        assertThat(SendStreamHeader.subvolumeName(Arrays.copyOf(full, full.length - 3))).as("cut in its first command").isEmpty();
        assertThat(SendStreamHeader.subvolumeName(stream(3, attribute(PATH, "ckpt_one")))).as("another command first").isEmpty();
        assertThat(SendStreamHeader.subvolumeName(stream(SUBVOL, attribute(UUID, new byte[16])))).as("no path").isEmpty();
    }

    private static byte[] stream(int command, byte[]... attributes) {
        var body = new ByteArrayOutputStream();
        for (byte[] a : attributes) body.writeBytes(a);
        byte[] attrs = body.toByteArray();
        var out = new ByteArrayOutputStream();
        out.writeBytes("btrfs-stream\0".getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(1).array()); // version
        out.writeBytes(ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).putInt(attrs.length).putShort((short) command).putInt(0).array());
        out.writeBytes(attrs);
        return out.toByteArray();
    }

    private static byte[] attribute(int type, String value) {
        return attribute(type, value.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] attribute(int type, byte[] value) {
        return ByteBuffer.allocate(4 + value.length).order(ByteOrder.LITTLE_ENDIAN)
                .putShort((short) type).putShort((short) value.length).put(value).array();
    }
}

package io.stasis.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.e2b.ConnectRpc.Code;
import io.stasis.e2b.ConnectRpc.RpcException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class ConnectRpcTest {
    @Property
    void anEnvelopedMessageReadsBackAsItWasWritten(@ForAll @Size(max = 70_000) byte[] message) throws IOException {
        byte[] wire = ConnectRpc.envelope(0, message);
        assertThat(wire).hasSize(message.length + 5);
        assertThat(ConnectRpc.readEnvelope(new ByteArrayInputStream(wire))).isEqualTo(message);
    }

    @Property
    void aMessageCutShortAnywhereIsRefusedAsInvalid(@ForAll @Size(min = 1, max = 200) byte[] message, @ForAll int cutSeed) {
        byte[] wire = ConnectRpc.envelope(0, message);
        int cut = Math.floorMod(cutSeed, wire.length); // 0 .. length-1: at least one byte missing
        assertThatThrownBy(() -> ConnectRpc.readEnvelope(new ByteArrayInputStream(Arrays.copyOf(wire, cut))))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code).isEqualTo(Code.INVALID_ARGUMENT));
    }

    @Property
    void aClientStreamReadsBackEveryMessageInOrderThenEnds(@ForAll @Size(max = 20) List<@Size(max = 50) String> texts) throws IOException {
        var wire = new ByteArrayOutputStream();
        for (String text : texts) wire.write(ConnectRpc.envelope(0, ("{\"t\": " + ConnectRpc.JSON.writeValueAsString(text) + "}").getBytes(StandardCharsets.UTF_8)));
        var read = new ArrayList<String>();
        for (var message : ConnectRpc.messages(new ByteArrayInputStream(wire.toByteArray()))) read.add(message.path("t").asText());
        assertThat(read).isEqualTo(texts);
        byte[] cut = Arrays.copyOf(wire.toByteArray(), Math.max(0, wire.size() - 1));
        if (!texts.isEmpty())
            assertThatThrownBy(() -> ConnectRpc.messages(new ByteArrayInputStream(cut)).forEach(m -> { }))
                    .as("a stream cut inside its last message").isInstanceOf(RpcException.class);
    }

    @Test
    void theLengthIsBigEndianAfterTheFlags() {
        byte[] wire = ConnectRpc.envelope(ConnectRpc.END_STREAM, new byte[0x0102]);
        assertThat(Arrays.copyOf(wire, 5)).containsExactly(0x02, 0, 0, 0x01, 0x02);
    }

    @Test
    void compressedAndOversizedMessagesAreRefused() {
        byte[] compressed = ConnectRpc.envelope(0x01, "{}".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> ConnectRpc.readEnvelope(new ByteArrayInputStream(compressed)))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code).isEqualTo(Code.UNIMPLEMENTED));
        byte[] huge = {0, 0x7f, 0, 0, 0};
        assertThatThrownBy(() -> ConnectRpc.readEnvelope(new ByteArrayInputStream(huge)))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code).isEqualTo(Code.RESOURCE_EXHAUSTED));
    }

    @Test
    void aMessageMustBeAJsonObject() {
        assertThat(ConnectRpc.parse("{\"path\": \"/x\"}".getBytes(StandardCharsets.UTF_8)).path("path").asText()).isEqualTo("/x");
        assertThat(ConnectRpc.parse(new byte[0]).isObject()).as("an empty message is the empty object").isTrue();
        for (String bad : new String[] {"null", "[1]", "\"x\"", "{", "nope"})
            assertThatThrownBy(() -> ConnectRpc.parse(bad.getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code).isEqualTo(Code.INVALID_ARGUMENT));
    }

    @Test
    void codesAreTheirWireNamesWithConnectsHttpStatuses() {
        assertThat(Code.NOT_FOUND.wireName()).isEqualTo("not_found");
        assertThat(Code.DEADLINE_EXCEEDED.wireName()).isEqualTo("deadline_exceeded");
        assertThat(Code.NOT_FOUND.httpStatus).isEqualTo(404);
        assertThat(Code.UNAUTHENTICATED.httpStatus).isEqualTo(401);
        assertThat(Code.RESOURCE_EXHAUSTED.httpStatus).isEqualTo(429);
    }
}

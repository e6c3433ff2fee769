package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The terminal WebSocket's control messages and request, without a server; and a refused upgrade. */
class TerminalMessageTest {
    @Test
    void readsTheServersMessages() {
        assertThat(TerminalMessage.parse("{\"type\": \"started\", \"pid\": 12}")).isEqualTo(new TerminalMessage.Started(12));
        assertThat(TerminalMessage.parse("{\"type\":\"exit\",\"exitCode\":3}")).isEqualTo(new TerminalMessage.Exit(3));
        assertThat(TerminalMessage.parse("{\"type\": \"later\", \"x\": 1}")).isEqualTo(new TerminalMessage.Other("later"));
        var error = (TerminalMessage.Error) TerminalMessage.parse(
                "{\"type\": \"error\", \"code\": \"sandbox_not_found\", \"message\": \"no sandbox 'x'\"}");
        assertThat(error.toException()).isInstanceOfSatisfying(NotFoundException.class, e -> {
            assertThat(e.code()).isEqualTo("sandbox_not_found");
            assertThat(e.status()).isEqualTo(404);
            assertThat(e.errorMessage()).isEqualTo("no sandbox 'x'");
        });
        assertThat(new TerminalMessage.Error("invalid_state", "ended").toException()).isInstanceOf(ConflictException.class);
        assertThat(new TerminalMessage.Error("brand_new", "?").toException()).hasSameClassAs(
                new StasisApiException(0, "brand_new", "?", null, null));
    }

    @Test
    void refusesWhatIsNotAControlMessage() {
        assertThatThrownBy(() -> TerminalMessage.parse("not json")).isInstanceOf(StasisClientException.class)
                .hasMessageContaining("not JSON");
        assertThatThrownBy(() -> TerminalMessage.parse("[1]")).hasMessageContaining("without a type");
        assertThatThrownBy(() -> TerminalMessage.parse("{\"pid\": 1}")).hasMessageContaining("without a type");
    }

    @Test
    void writesResizeMessages() {
        assertThat(TerminalMessage.resize(new TerminalSize(120, 40))).isEqualTo("{\"type\":\"resize\",\"cols\":120,\"rows\":40}");
        assertThat(TerminalMessage.endOfInput()).isEqualTo("{\"type\":\"eof\"}");
        assertThatThrownBy(() -> new TerminalSize(0, 10)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void requestsBecomeQueryParameters() {
        assertThat(TerminalRequest.loginShell().toQuery().toQueryString()).isEmpty();
        assertThat(TerminalRequest.builder().size(100, 30).cmd("python3", "-c", "print(1 + 1)").hangup(false).build()
                .toQuery().toQueryString())
                .isEqualTo("?cols=100&rows=30&cmd=python3&cmd=-c&cmd=print%281%20%2B%201%29&hangup=false");
        assertThat(TerminalRequest.builder().attach(12).replayFrom(0).build().toQuery().toQueryString())
                .isEqualTo("?pid=12&offset=0");
        assertThatThrownBy(() -> TerminalRequest.builder().attach(12).cmd("sh").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TerminalRequest.builder().replayFrom(5).build()).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRefusedUpgradeIsTheMappedApiError() throws IOException {
        try (var api = new FakeApi();
             var client = StasisClient.builder().url(api.url()).apiKey("wrong").requestTimeout(Duration.ofSeconds(5)).build()) {
            api.json("GET /v1/sandboxes/sbx_1/terminal", 401,
                    "{\"error\": {\"code\": \"unauthenticated\", \"message\": \"unknown key\"}}");
            assertThatThrownBy(() -> client.sandboxes().terminal("sbx_1", TerminalRequest.loginShell(), null))
                    .isInstanceOfSatisfying(UnauthenticatedException.class, e -> assertThat(e.status()).isEqualTo(401));
            assertThat(api.last().header("Authorization")).isEqualTo("Bearer wrong");
            assertThat(api.last().header("Upgrade")).isEqualToIgnoringCase("websocket");
        }
    }
}

package io.stasis.network.linux.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What {@link InterceptingCarrier} decides on its own; its framing is the http1 module's, tested there. */
class InterceptingCarrierTest {

    @Test
    void theHostOfAHostHeader() {
        assertThat(InterceptingCarrier.hostPart("API.example.com:443")).isEqualTo("api.example.com");
        assertThat(InterceptingCarrier.hostPart("api.example.com.")).isEqualTo("api.example.com");
        assertThat(InterceptingCarrier.hostPart("[::1]:8443")).isEqualTo("::1");
    }
}

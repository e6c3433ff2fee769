package io.stasis.server.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** SigV4 against the examples of AWS's own documentation ("Signature Calculations for the Authorization Header", S3). */
class SigV4Test {
    private static final String SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    private static final Instant AT = Instant.parse("2013-05-24T00:00:00Z");
    private static final Map<String, List<String>> HEADERS = Map.of(
            "host", List.of("examplebucket.s3.amazonaws.com"),
            "range", List.of("bytes=0-9"),
            "x-amz-content-sha256", List.of(SigV4.EMPTY_SHA256),
            "x-amz-date", List.of("20130524T000000Z"));
    private static final String AUTHORIZATION = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";

    private static SigV4.Request get(Map<String, List<String>> headers) {
        return new SigV4.Request("GET", "/test.txt", null, headers::get);
    }

    @Test
    void theDocumentedGetObjectExampleVerifies() {
        var verified = SigV4.verify(get(HEADERS), SigV4.parse(AUTHORIZATION), SECRET, AT);
        assertThat(verified.accessKeyId()).isEqualTo("AKIAIOSFODNN7EXAMPLE");
        assertThat(verified.scope()).isEqualTo("20130524/us-east-1/s3/aws4_request");
    }

    @Test
    void anotherSecretAChangedHeaderOrAnOldDateAreRefused() {
        assertThatThrownBy(() -> SigV4.verify(get(HEADERS), SigV4.parse(AUTHORIZATION), "other", AT))
                .isInstanceOfSatisfying(SigV4.Refused.class, e -> assertThat(e.code).isEqualTo("SignatureDoesNotMatch"));
        var changed = new HashMap<>(HEADERS);
        changed.put("range", List.of("bytes=0-99"));
        assertThatThrownBy(() -> SigV4.verify(get(changed), SigV4.parse(AUTHORIZATION), SECRET, AT))
                .isInstanceOfSatisfying(SigV4.Refused.class, e -> assertThat(e.code).isEqualTo("SignatureDoesNotMatch"));
        assertThatThrownBy(() -> SigV4.verify(get(HEADERS), SigV4.parse(AUTHORIZATION), SECRET, AT.plusSeconds(3600)))
                .isInstanceOfSatisfying(SigV4.Refused.class, e -> assertThat(e.code).isEqualTo("RequestTimeTooSkewed"));
        assertThatThrownBy(() -> SigV4.parse("Bearer x")).isInstanceOf(SigV4.Refused.class);
    }

    @Test
    void queriesAreCanonicalizedSortedAndEncoded() {
        assertThat(SigV4.canonicalQuery("prefix=a%20b&list-type=2&max-keys=1&uploads")).isEqualTo("list-type=2&max-keys=1&prefix=a%20b&uploads=");
        assertThat(SigV4.encode("a/b~c d+")).isEqualTo("a%2Fb~c%20d%2B");
    }
}

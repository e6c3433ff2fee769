package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Bucket mounts on create: what the builder sends, what the CLI's spec parses to, and the mounts an answer shows. */
class BucketMountsTest {
    private static final String SANDBOX = "{\"id\": \"sbx_abcdefgh\", \"template\": \"tiny\", \"state\": \"running\","
            + " \"createdAt\": \"2026-11-29T18:00:00Z\", \"mounts\": [{\"type\": \"s3\", \"endpoint\": \"http://127.0.0.1:9000\","
            + " \"region\": \"us-east-1\", \"bucket\": \"data\", \"prefix\": \"2026\", \"path\": \"/data\", \"readOnly\": true,"
            + " \"credentialsSecret\": \"DATA_KEY\"}]}";

    @AutoClose
    final FakeApi api = FakeApi.start();

    @AutoClose
    final StasisClient client = api.client();

    @Test
    void theBuilderSendsMountsAndTheAnswerShowsThem() {
        api.json("POST /v1/sandboxes", 201, SANDBOX);
        var sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny")
                .mount(BucketMount.s3("http://127.0.0.1:9000", "data", "/data", "DATA_KEY").withPrefix("2026").asReadOnly())
                .build());
        assertThat(api.last().bodyText()).contains("\"mounts\":[{\"type\":\"s3\",\"endpoint\":\"http://127.0.0.1:9000\",\"bucket\":\"data\","
                + "\"prefix\":\"2026\",\"path\":\"/data\",\"readOnly\":true,\"credentialsSecret\":\"DATA_KEY\"}]");
        assertThat(sandbox.info().mounts()).containsExactly(new BucketMount("s3", "http://127.0.0.1:9000", "us-east-1", "data", "2026", "/data",
                true, "DATA_KEY"));
    }

    @Test
    void aRequestWithoutMountsSendsNone() {
        api.json("POST /v1/sandboxes", 201, SANDBOX.replaceAll(", \"mounts\".*]", ""));
        var sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
        assertThat(api.last().bodyText()).doesNotContain("mounts");
        assertThat(sandbox.info().mounts()).isEmpty();
    }

    @Test
    void theCliSpecParses() {
        assertThat(BucketMount.parse("endpoint=http://127.0.0.1:9000,bucket=data,prefix=2026,path=/data,secret=DATA_KEY,ro"))
                .isEqualTo(new BucketMount("s3", "http://127.0.0.1:9000", null, "data", "2026", "/data", true, "DATA_KEY"));
        assertThat(BucketMount.parse("bucket=b,path=/b,secret=S,endpoint=https://s3.amazonaws.com,region=eu-west-1").region()).isEqualTo("eu-west-1");
        assertThatThrownBy(() -> BucketMount.parse("bucket=b,path=/b,secret=S")).hasMessageContaining("endpoint=");
        assertThatThrownBy(() -> BucketMount.parse("endpoint=x,bucket=b,bucket=c,path=/b,secret=S")).hasMessageContaining("each key once");
        assertThatThrownBy(() -> BucketMount.parse("endpoint=x,bucket=b,path=/b,secret=S,colour=red")).hasMessageContaining("endpoint=URL");
    }

    @Test
    void aValueWithACommaIsQuotedAsInDockersMount() {
        assertThat(BucketMount.parse("endpoint=http://h,bucket=b,prefix=\"runs,2026\",path=/b,secret=S").prefix()).isEqualTo("runs,2026");
        assertThat(BucketMount.parse("endpoint=http://h,bucket=b,\"prefix=a,b,c\",path=/b,secret=S,ro").prefix()).isEqualTo("a,b,c");
        assertThat(BucketMount.parse("endpoint=http://h,bucket=b,prefix=\"say \"\"hi\"\", x\",path=/b,secret=S").prefix()).isEqualTo("say \"hi\", x");
        assertThatThrownBy(() -> BucketMount.parse("endpoint=http://h,bucket=b,prefix=\"open,path=/b,secret=S")).hasMessageContaining("not closed");
    }

    /** Any prefix, quoted the documented way, comes back as it was. */
    @net.jqwik.api.Property(tries = 300)
    void anyQuotedPrefixRoundTrips(@net.jqwik.api.ForAll @net.jqwik.api.constraints.StringLength(max = 30)
                                   @net.jqwik.api.constraints.Chars({',', '"', '=', 'a', 'b', ' ', '/'}) String prefix) {
        String quoted = "\"" + prefix.replace("\"", "\"\"") + "\"";
        assertThat(BucketMount.parse("endpoint=http://h,bucket=b,prefix=" + quoted + ",path=/b,secret=S").prefix()).isEqualTo(prefix);
    }
}

package io.stasis.server.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DeleteObjectsRequestTest {
    private static DeleteObjectsRequest parse(String xml) {
        return DeleteObjectsRequest.parse(xml.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readsKeysAndQuietAsTheAwsSdkSendsThem() {
        var request = parse("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                + "<Object><Key>a &amp; b.txt</Key></Object><Object><Key>dir/c</Key><VersionId>x</VersionId></Object><Quiet>true</Quiet></Delete>");
        assertThat(request.keys()).containsExactly("a & b.txt", "dir/c");
        assertThat(request.quiet()).isTrue();
        assertThat(parse("<Delete><Object><Key>k</Key></Object></Delete>").quiet()).isFalse();
    }

    @Test
    void refusesWhatIsNotADeleteWithKeys() {
        for (String xml : new String[] {"", "not xml", "<Other/>", "<Delete/>", "<Delete><Object/></Delete>", "<Delete><Bogus/></Delete>"})
            assertThatThrownBy(() -> parse(xml)).as(xml).isInstanceOfSatisfying(S3Error.class, e -> {
                assertThat(e.status).isEqualTo(400);
                assertThat(e.code).isEqualTo("MalformedXML");
            });
        assertThatThrownBy(() -> parse("<Delete>" + "<Object><Key>k</Key></Object>".repeat(1001) + "</Delete>"))
                .isInstanceOf(S3Error.class).hasMessageContaining("at most 1000");
    }

    @Test
    void entitiesAndDoctypesAreRefusedNotResolved() {
        String xxe = "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><Delete><Object><Key>&x;</Key></Object></Delete>";
        assertThatThrownBy(() -> parse(xxe)).isInstanceOf(S3Error.class).hasMessageContaining("DOCTYPE");
    }
}

package io.stasis.server.s3;

import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** The pieces of S3's XML answers. */
final class S3Xml {
    static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private S3Xml() {
    }

    static void tag(StringBuilder xml, String name, String value) {
        xml.append('<').append(name).append('>').append(escape(value)).append("</").append(name).append('>');
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;").replace("'", "&apos;");
    }
}

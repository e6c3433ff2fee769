package io.stasis.server.http;

import io.stasis.core.error.StasisException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** How bytes travel in JSON: UTF-8 text where they are text, base64 where asked or where they are not. */
enum Encodings {
    UTF8("utf-8"), BASE64("base64");

    final String wireName;

    Encodings(String wireName) {
        this.wireName = wireName;
    }

    static Encodings parse(String field, String value) {
        if (value == null || value.equalsIgnoreCase("utf-8") || value.equalsIgnoreCase("utf8")) return UTF8;
        if (value.equalsIgnoreCase("base64")) return BASE64;
        throw StasisException.invalid(field, "must be \"utf-8\" or \"base64\", was '" + value + "'");
    }

    /** Text for the wire; invalid UTF-8 becomes U+FFFD in {@link #UTF8}. */
    String encode(byte[] bytes) {
        return this == BASE64 ? Base64.getEncoder().encodeToString(bytes) : new String(bytes, StandardCharsets.UTF_8);
    }

    byte[] decode(String field, String text) {
        if (this == UTF8) return text.getBytes(StandardCharsets.UTF_8);
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw StasisException.invalid(field, "is not valid base64");
        }
    }

    static boolean isValidUtf8(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}

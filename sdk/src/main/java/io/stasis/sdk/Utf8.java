package io.stasis.sdk;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Encoding helpers shared by exec and files: strict UTF-8 checks and base64. */
final class Utf8 {
    private Utf8() {
    }

    static boolean isValid(byte[] bytes) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    static String base64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** Bytes of a wire string: base64-decoded when {@code encoding} says so, else its UTF-8 bytes. */
    static byte[] decode(String data, String encoding) {
        if (data == null) return new byte[0];
        if ("base64".equalsIgnoreCase(encoding)) {
            try {
                return Base64.getMimeDecoder().decode(data);
            } catch (IllegalArgumentException e) {
                throw new StasisClientException("the server sent invalid base64: " + e.getMessage(), e);
            }
        }
        return data.getBytes(StandardCharsets.UTF_8);
    }
}

package io.stasis.mcp;

import io.stasis.sdk.FileInfo;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.SandboxInfo;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** The plain-text forms of API objects that the tools answer with. */
final class Texts {
    private Texts() {
    }

    /** {@code sbx_... "name": running, template tiny, 1 cpu 1024 MB, created ...} */
    static String sandbox(Sandbox sandbox) {
        return sandbox(sandbox.info());
    }

    static String sandbox(SandboxInfo s) {
        var text = new StringBuilder(s.id());
        if (s.name() != null) text.append(" \"").append(s.name()).append('"');
        text.append(": ").append(s.state());
        if (s.stateReason() != null && !"running".equals(s.state())) text.append(" (").append(s.stateReason()).append(')');
        text.append(", template ").append(s.template());
        if (s.resources() != null) {
            text.append(", ").append(s.resources().cpus()).append(" cpu, ").append(s.resources().memoryMb()).append(" MB");
        }
        if (s.parentId() != null) text.append(", forked from ").append(s.parentId());
        if (s.checkpointId() != null) text.append(" at ").append(s.checkpointId());
        return text.append(", created ").append(s.createdAt()).toString();
    }

    /** One line of a directory listing: type, size, mode, time, path. */
    static String file(FileInfo f) {
        String type = switch (f.type()) {
            case DIR -> "dir    ";
            case FILE -> "file   ";
            case SYMLINK -> "symlink";
            case OTHER -> "other  ";
        };
        var line = new StringBuilder(type).append(' ').append(String.format("%10d", f.size())).append(' ')
                .append(f.mode()).append(' ').append(f.modifiedAt()).append(' ').append(f.path());
        if (f.isDirectory()) line.append('/');
        if (f.symlinkTarget() != null) line.append(" -> ").append(f.symlinkTarget());
        return line.toString();
    }

    /**
     * At most {@code limit} characters of {@code text}: when longer, its first and last parts with
     * a note between them saying how much was left out (the end of an output is where errors are).
     */
    static String bounded(String text, int limit, String hint) {
        if (text.length() <= limit) return text;
        int head = limit / 4;
        int tail = limit - head;
        int omitted = text.length() - head - tail;
        return text.substring(0, head) + "\n[... " + omitted + " characters omitted; " + hint + " ...]\n"
                + text.substring(text.length() - tail);
    }

    /** How many of the first {@code max} bytes end on a UTF-8 character boundary. */
    static int utf8Prefix(byte[] bytes, int max) {
        if (bytes.length <= max) return bytes.length;
        int end = max;
        // back up over continuation bytes (10xxxxxx) to the start of the cut character
        while (end > 0 && (bytes[end] & 0xC0) == 0x80 && max - end < 4) end--;
        return end == 0 ? max : end;
    }

    /** The bytes as text if they are valid UTF-8, else null. */
    static String utf8OrNull(byte[] bytes, int length) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, 0, length)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}

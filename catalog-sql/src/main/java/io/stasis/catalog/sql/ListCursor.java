package io.stasis.catalog.sql;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;

/**
 * Where a page of {@code list()} ended: the sort key (creation time, id) of its last sandbox. The
 * next page continues strictly after this key, so sandboxes deleted or created meanwhile never
 * make a page repeat or skip the ones that were there all along.
 *
 * <p>On the wire it is opaque: base64url of {@code v1|<created_at>|<id>}. The version prefix lets a
 * later encoding tell old cursors apart.
 */
record ListCursor(Instant createdAt, SandboxId id) {
    private static final String VERSION = "v1";

    static ListCursor after(Sandbox last) {
        return new ListCursor(last.createdAt(), last.id());
    }

    String encode() {
        String plain = VERSION + "|" + CatalogTime.format(createdAt) + "|" + id.value();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    /** Decodes a cursor from a previous page; {@code invalid_request} for anything else. */
    static ListCursor decode(String cursor) {
        String plain;
        try {
            plain = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw notACursor();
        }
        String[] parts = plain.split("\\|", -1);
        if (parts.length != 3 || !parts[0].equals(VERSION) || !SandboxId.isValid(parts[2])) throw notACursor();
        try {
            var createdAt = CatalogTime.parse(parts[1]);
            // Only text we could have written: this also rejects years the catalog cannot store.
            if (!CatalogTime.format(createdAt).equals(parts[1])) throw notACursor();
            return new ListCursor(createdAt, new SandboxId(parts[2]));
        } catch (DateTimeParseException | IllegalArgumentException e) {
            throw notACursor();
        }
    }

    private static StasisException notACursor() {
        return StasisException.invalid("cursor", "not a cursor returned by a previous page (pass nextCursor unchanged)");
    }
}

package io.stasis.core.audit;

import java.util.List;
import java.util.Optional;

/** A page of the audit log, newest first; {@code nextCursor} continues with older entries. */
public record AuditPage(List<AuditEntry> items, Optional<String> nextCursor) {
    public AuditPage {
        items = List.copyOf(items);
    }
}

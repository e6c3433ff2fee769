package io.stasis.core.spi;

import io.stasis.core.audit.AuditEntry;
import io.stasis.core.audit.AuditPage;
import io.stasis.core.audit.AuditQuery;

/** Where the audit log is kept: appended to by many threads, listed newest first. */
public interface AuditLog {
    /** Appends {@code entry}; never fails the caller's work (a log that cannot be written says so in the service's log). */
    void append(AuditEntry entry);

    /** The entries {@code query} matches, newest first; {@code invalid_request} for a cursor this log did not hand out. */
    AuditPage query(AuditQuery query);
}

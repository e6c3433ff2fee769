-- Previews: ports of sandboxes exposed over HTTP through the preview listener. A private preview
-- keeps only the SHA-256 hash of its token. A row lives as long as its sandbox: delete() removes
-- a sandbox's previews in its own transaction, and insertPreview() records one only while the
-- sandbox exists (not a foreign key: a rebuild of the sandboxes table, as V2 did, would cascade).

CREATE TABLE previews (
    id          TEXT    NOT NULL PRIMARY KEY,
    sandbox_id  TEXT    NOT NULL,
    port        INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    public      INTEGER NOT NULL CHECK (public IN (0, 1)),
    token_hash  TEXT,                               -- hex SHA-256 of the token; NULL when public
    created_at  TEXT    NOT NULL,
    expires_at  TEXT,                               -- NULL: never
    CHECK ((public = 1) = (token_hash IS NULL))
) STRICT;

-- previewsOf(sandbox), oldest first; also the proxy's lookup of a sandbox's port.
CREATE INDEX previews_by_sandbox ON previews (sandbox_id, created_at, id);

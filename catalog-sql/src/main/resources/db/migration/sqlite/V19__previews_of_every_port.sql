-- A preview may expose every port of its sandbox (port 0), as E2B's sandboxes do by default.
-- SQLite cannot change a CHECK in place: the table is rebuilt with its rows.
CREATE TABLE previews_v19 (
    id          TEXT    NOT NULL PRIMARY KEY,
    sandbox_id  TEXT    NOT NULL,
    port        INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),  -- 0: every port
    public      INTEGER NOT NULL CHECK (public IN (0, 1)),
    token_hash  TEXT,                               -- hex SHA-256 of the token; NULL when public
    created_at  TEXT    NOT NULL,
    expires_at  TEXT,                               -- NULL: never
    CHECK ((public = 1) = (token_hash IS NULL))
) STRICT;
INSERT INTO previews_v19 SELECT id, sandbox_id, port, public, token_hash, created_at, expires_at FROM previews;
DROP TABLE previews;
ALTER TABLE previews_v19 RENAME TO previews;
CREATE INDEX previews_by_sandbox ON previews (sandbox_id, created_at, id);

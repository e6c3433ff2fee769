-- The first schema: sandboxes and API keys.
-- Times are fixed-width ISO-8601 UTC text with nanoseconds ("2026-01-02T03:04:05.000000000Z"):
-- exact for any Instant a Clock gives, readable in the sqlite3 shell, and ordered as text.

CREATE TABLE sandboxes (
    id           TEXT    NOT NULL PRIMARY KEY,
    name         TEXT    UNIQUE,                -- NULL for unnamed sandboxes; NULLs never collide
    template     TEXT    NOT NULL,
    state        TEXT    NOT NULL,              -- SandboxState.wireName()
    state_reason TEXT,                          -- Stopped's reason, else NULL
    created_at   TEXT    NOT NULL,
    cpus         REAL    NOT NULL,
    memory_mb    INTEGER NOT NULL,
    pids         INTEGER NOT NULL,
    env          TEXT    NOT NULL CHECK (json_valid(env)),       -- JSON object of strings
    metadata     TEXT    NOT NULL CHECK (json_valid(metadata))   -- JSON object of strings
) STRICT;

-- list() pages in (created_at, id) order and continues after a cursor on the same key.
CREATE INDEX sandboxes_by_creation ON sandboxes (created_at, id);

CREATE TABLE api_keys (
    id          TEXT    NOT NULL PRIMARY KEY,
    secret_hash TEXT    NOT NULL UNIQUE,
    root        INTEGER NOT NULL CHECK (root IN (0, 1)),
    created_at  TEXT    NOT NULL
) STRICT;

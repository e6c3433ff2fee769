-- Live state: paused and hibernated sandboxes, forks, lifecycle policies, checkpoints, the
-- journal of operations in progress, and the event log.
--
-- The sandboxes table is rebuilt (SQLite's documented create-copy-drop-rename procedure) rather
-- than altered: ALTER TABLE ADD COLUMN cannot add a NOT NULL column without a DEFAULT that would
-- then stay in the schema forever, nor a constraint spanning several columns. No table or trigger
-- refers to sandboxes yet, so nothing else needs rebuilding.

CREATE TABLE sandboxes_v2 (
    id                       TEXT    NOT NULL PRIMARY KEY,
    name                     TEXT    UNIQUE,        -- NULL for unnamed sandboxes; NULLs never collide
    template                 TEXT    NOT NULL,
    state                    TEXT    NOT NULL,      -- SandboxState.wireName()
    state_reason             TEXT,                  -- Stopped's reason, else NULL
    hibernated_checkpoint_id TEXT,                  -- Hibernated's fields, all set in that state only
    hibernated_image_bytes   INTEGER,
    hibernated_at            TEXT,
    created_at               TEXT    NOT NULL,
    cpus                     REAL    NOT NULL,
    memory_mb                INTEGER NOT NULL,
    pids                     INTEGER NOT NULL,
    env                      TEXT    NOT NULL CHECK (json_valid(env)),       -- JSON object of strings
    metadata                 TEXT    NOT NULL CHECK (json_valid(metadata)),  -- JSON object of strings
    parent_id                TEXT,                  -- the sandbox it was forked from; no foreign key:
    checkpoint_id            TEXT,                  -- lineage outlives the parent and the checkpoint
    lifecycle                TEXT    NOT NULL CHECK (json_valid(lifecycle)), -- LifecyclePolicy, see LifecycleJson
    CHECK (state = 'stopped' OR state_reason IS NULL),
    CHECK (CASE WHEN state = 'hibernated'
                THEN hibernated_checkpoint_id IS NOT NULL AND hibernated_image_bytes IS NOT NULL AND hibernated_at IS NOT NULL
                ELSE hibernated_checkpoint_id IS NULL AND hibernated_image_bytes IS NULL AND hibernated_at IS NULL
           END)
) STRICT;

-- Rows from V1 get LifecyclePolicy.DEFAULT as it was when this script was written (pause after
-- 15 s idle, hibernate after 10 min, delete after 30 days idle, no stop step, no maximum age,
-- auto-resume): a later change of the default must not change what existing sandboxes were given.
INSERT INTO sandboxes_v2 (id, name, template, state, state_reason, created_at, cpus, memory_mb, pids, env, metadata, lifecycle)
SELECT id, name, template, state, state_reason, created_at, cpus, memory_mb, pids, env, metadata,
       '{"pauseAfterIdle":"PT15S","hibernateAfterIdle":"PT10M","stopAfterIdle":null,"deleteAfterIdle":"PT720H","maxAge":null,"autoResume":true}'
FROM sandboxes;

DROP TABLE sandboxes;  -- drops sandboxes_by_creation with it
ALTER TABLE sandboxes_v2 RENAME TO sandboxes;

-- list() pages in (created_at, id) order and continues after a cursor on the same key.
CREATE INDEX sandboxes_by_creation ON sandboxes (created_at, id);
-- children(parent), oldest first.
CREATE INDEX sandboxes_by_parent ON sandboxes (parent_id, created_at, id) WHERE parent_id IS NOT NULL;

-- Checkpoints outlive their sandbox (a fork may start from a checkpoint of a deleted sandbox),
-- so sandbox_id is not a foreign key. Names need not be unique.
CREATE TABLE checkpoints (
    id          TEXT    NOT NULL PRIMARY KEY,
    sandbox_id  TEXT    NOT NULL,
    name        TEXT,
    memory      INTEGER NOT NULL CHECK (memory IN (0, 1)),
    purpose     TEXT    NOT NULL,               -- Checkpoint.Purpose.wireName()
    size_bytes  INTEGER NOT NULL,
    created_at  TEXT    NOT NULL
) STRICT;

-- checkpointsOf(sandbox), oldest first.
CREATE INDEX checkpoints_by_sandbox ON checkpoints (sandbox_id, created_at, id);

-- At most one operation in progress per sandbox. Not a foreign key either: an operation may be
-- journaled before its sandbox's row exists (a fork's new sandbox), and delete() removes it itself.
CREATE TABLE operations (
    sandbox_id    TEXT NOT NULL PRIMARY KEY,
    kind          TEXT NOT NULL,                -- Operation.Kind, lowercase: "hibernate"
    checkpoint_id TEXT,
    started_at    TEXT NOT NULL
) STRICT;

-- AUTOINCREMENT: ids are never reused, even after the newest rows were deleted, so an event
-- stream resumed from an id never sees an older event under a newer number (also across restarts).
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    sandbox_id  TEXT,                            -- NULL for events about no single sandbox
    data        TEXT    NOT NULL CHECK (json_valid(data) AND json_type(data) = 'object')
) STRICT;

-- eventsAfter(id, sandbox): one sandbox's events in id order.
CREATE INDEX events_by_sandbox ON events (sandbox_id, id);

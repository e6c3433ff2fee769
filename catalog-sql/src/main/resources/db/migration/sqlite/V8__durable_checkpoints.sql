-- Durable checkpoints: where each checkpoint's copy in the blob store stands. A row exists once an
-- upload was asked for (durable: true, a background upload, a durable hibernation); state
-- 'durable' means its descriptor is in the blob store. The manifest ids name the stored streams.
-- Not a foreign key: the row is removed with its checkpoint by the service.
CREATE TABLE checkpoint_uploads (
    checkpoint_id  TEXT    NOT NULL PRIMARY KEY,
    state          TEXT    NOT NULL CHECK (state IN ('pending', 'durable', 'failed')),
    parent_id      TEXT,                         -- the checkpoint the root stream is incremental to
    root_manifest  TEXT,
    image_manifest TEXT,
    logical_bytes  INTEGER NOT NULL,
    stored_bytes   INTEGER NOT NULL,
    error          TEXT,
    updated_at     TEXT    NOT NULL,
    CHECK (state <> 'durable' OR root_manifest IS NOT NULL)
) STRICT;

-- Each sandbox's newest durable checkpoint (DurableImage): its id, the SHA-256 of its descriptor
-- as stored, and when it was taken. A row of its own, so that an upload ending in the background
-- never races a change of the sandbox's row.

CREATE TABLE durable_images (
    sandbox_id    TEXT PRIMARY KEY,
    checkpoint_id TEXT NOT NULL,
    digest        TEXT NOT NULL,
    taken_at      TEXT NOT NULL
);

-- Nodes: the services sharing a catalog, and which node holds each sandbox, checkpoint, volume,
-- network, upload and operation (their files and processes are on its host). '' is "no node yet":
-- a SQLite catalog is one node's, which claims every row when it opens it.

CREATE TABLE nodes (
    name          TEXT NOT NULL PRIMARY KEY,
    advertise_url TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    lease_until   TEXT NOT NULL,
    capacity      TEXT NOT NULL CHECK (json_valid(capacity) AND json_type(capacity) = 'object')  -- NodeCapacity
) STRICT;

ALTER TABLE sandboxes ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE checkpoints ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE volumes ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE checkpoint_uploads ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE operations ADD COLUMN node TEXT NOT NULL DEFAULT '';

-- A network's slot is an address range of its node's host: unique per node, not across the catalog.
CREATE TABLE sandbox_networks_v15 (
    sandbox_id TEXT    NOT NULL PRIMARY KEY,
    slot       INTEGER NOT NULL CHECK (slot >= 0),
    policy     TEXT    NOT NULL CHECK (json_valid(policy) AND json_type(policy) = 'object'),  -- see NetworkJson
    node       TEXT    NOT NULL DEFAULT '',
    UNIQUE (node, slot)
) STRICT;
INSERT INTO sandbox_networks_v15 (sandbox_id, slot, policy) SELECT sandbox_id, slot, policy FROM sandbox_networks;
DROP TABLE sandbox_networks;
ALTER TABLE sandbox_networks_v15 RENAME TO sandbox_networks;

CREATE INDEX sandboxes_by_node ON sandboxes (node, created_at, id);
CREATE INDEX checkpoints_by_node ON checkpoints (node, created_at, id);

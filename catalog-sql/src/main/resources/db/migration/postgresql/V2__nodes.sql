-- Nodes: as SQLite's V15. '' is "no node yet": rows moved from a SQLite file, claimed at the move.

CREATE TABLE nodes (
    name          ctext NOT NULL PRIMARY KEY,
    advertise_url ctext NOT NULL,
    started_at    ctext NOT NULL,
    lease_until   ctext NOT NULL,
    capacity      ctext NOT NULL CHECK (jsonb_typeof(capacity::jsonb) = 'object')  -- NodeCapacity
);

ALTER TABLE sandboxes ADD COLUMN node ctext NOT NULL DEFAULT '';
ALTER TABLE checkpoints ADD COLUMN node ctext NOT NULL DEFAULT '';
ALTER TABLE volumes ADD COLUMN node ctext NOT NULL DEFAULT '';
ALTER TABLE checkpoint_uploads ADD COLUMN node ctext NOT NULL DEFAULT '';
ALTER TABLE operations ADD COLUMN node ctext NOT NULL DEFAULT '';
ALTER TABLE sandbox_networks ADD COLUMN node ctext NOT NULL DEFAULT '';

-- A network's slot is an address range of its node's host: unique per node, not across the catalog.
ALTER TABLE sandbox_networks DROP CONSTRAINT sandbox_networks_slot_key;
ALTER TABLE sandbox_networks ADD CONSTRAINT sandbox_networks_node_slot_key UNIQUE (node, slot);

CREATE INDEX sandboxes_by_node ON sandboxes (node, created_at, id);
CREATE INDEX checkpoints_by_node ON checkpoints (node, created_at, id);

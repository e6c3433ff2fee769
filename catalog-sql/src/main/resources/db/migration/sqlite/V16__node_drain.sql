-- A node being drained: its sandboxes are hibernated to the durable store and the other nodes take them.
ALTER TABLE nodes ADD COLUMN draining INTEGER NOT NULL DEFAULT 0 CHECK (draining IN (0, 1));

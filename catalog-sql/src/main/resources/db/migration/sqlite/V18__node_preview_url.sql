-- Where other nodes pass on preview requests for a node's sandboxes: its preview listener. '' for none.
ALTER TABLE nodes ADD COLUMN preview_url TEXT NOT NULL DEFAULT '';

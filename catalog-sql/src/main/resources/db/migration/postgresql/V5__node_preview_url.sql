-- As SQLite's V18: a node's preview listener, for the other nodes. '' for none.
ALTER TABLE nodes ADD COLUMN preview_url ctext NOT NULL DEFAULT '';

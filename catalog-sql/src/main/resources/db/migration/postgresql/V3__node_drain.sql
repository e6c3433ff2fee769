-- As SQLite's V16: a node being drained.
ALTER TABLE nodes ADD COLUMN draining bigint NOT NULL DEFAULT 0 CHECK (draining IN (0, 1));

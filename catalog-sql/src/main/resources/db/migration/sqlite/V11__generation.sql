-- Generations: how many times a sandbox's live state has changed (Sandbox.generation). Sandboxes
-- recorded before there were generations start at 1.

ALTER TABLE sandboxes ADD COLUMN generation INTEGER NOT NULL DEFAULT 1;

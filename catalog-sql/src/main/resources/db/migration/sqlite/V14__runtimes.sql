-- Runtimes: which runtime runs a sandbox (Sandbox.runtime), and which one a checkpoint's image
-- belongs to (Checkpoint.runtime). Everything recorded before there was a choice ran under runc.

ALTER TABLE sandboxes ADD COLUMN runtime TEXT NOT NULL DEFAULT 'runc';
ALTER TABLE checkpoints ADD COLUMN runtime TEXT NOT NULL DEFAULT 'runc';

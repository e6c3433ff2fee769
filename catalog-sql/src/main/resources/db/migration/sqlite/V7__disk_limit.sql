-- Disk limits: the most MiB a sandbox's root filesystem may hold (resources.diskMb). Sandboxes
-- recorded before there were limits get the default, 10 GiB (Resources.DEFAULT_DISK_MB); the
-- service applies it to their roots when it starts (Reconciler).

ALTER TABLE sandboxes ADD COLUMN disk_mb INTEGER NOT NULL DEFAULT 10240;

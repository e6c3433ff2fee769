-- Bucket mounts: existing S3-compatible buckets a sandbox mounts through FUSE on the host. The key
-- is not here: only the name of the tenant's secret that holds it, read again at every mount.

CREATE TABLE sandbox_buckets (
    sandbox_id         TEXT    NOT NULL,     -- no foreign key: rows go with the sandbox (SqliteCatalog.delete)
    position           INTEGER NOT NULL,     -- the mount's index: its host id is <sandbox id>-<position>
    path               TEXT    NOT NULL,
    endpoint           TEXT    NOT NULL,
    region             TEXT    NOT NULL,
    bucket             TEXT    NOT NULL,
    prefix             TEXT    NOT NULL,     -- '' for the whole bucket
    read_only          INTEGER NOT NULL CHECK (read_only IN (0, 1)),
    credentials_secret TEXT    NOT NULL,
    PRIMARY KEY (sandbox_id, position)
) STRICT;

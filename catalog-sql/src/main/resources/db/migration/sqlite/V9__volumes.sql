-- Volumes: directory trees with a size limit that belong to a tenant and outlive sandboxes; which
-- sandbox mounts which; their snapshots; their syncs to the blob store.

CREATE TABLE volumes (
    id          TEXT    NOT NULL PRIMARY KEY,
    tenant_id   TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    size_mb     INTEGER NOT NULL,
    created_at  TEXT    NOT NULL,
    origin      TEXT,                 -- the snapshot or sync it was made from, else NULL
    UNIQUE (tenant_id, name)
) STRICT;

CREATE TABLE sandbox_volumes (
    sandbox_id  TEXT    NOT NULL,     -- no foreign key: rows go with the sandbox (SqliteCatalog.delete)
    position    INTEGER NOT NULL,
    volume_id   TEXT    NOT NULL,
    path        TEXT    NOT NULL,
    read_only   INTEGER NOT NULL CHECK (read_only IN (0, 1)),
    PRIMARY KEY (sandbox_id, position)
) STRICT;

CREATE INDEX sandbox_volumes_by_volume ON sandbox_volumes (volume_id);

CREATE TABLE volume_snapshots (
    id          TEXT    NOT NULL PRIMARY KEY,
    volume_id   TEXT    NOT NULL,
    created_at  TEXT    NOT NULL
) STRICT;

CREATE INDEX volume_snapshots_by_volume ON volume_snapshots (volume_id, created_at);

CREATE TABLE volume_syncs (
    id           TEXT    NOT NULL PRIMARY KEY,
    volume_id    TEXT    NOT NULL,
    volume_name  TEXT    NOT NULL,
    size_mb      INTEGER NOT NULL,
    streams      TEXT    NOT NULL CHECK (json_valid(streams)),  -- JSON array of manifest ids, oldest first
    parent_id    TEXT,
    snapshot     TEXT    NOT NULL,
    stream_bytes INTEGER NOT NULL,
    created_at   TEXT    NOT NULL
) STRICT;

CREATE INDEX volume_syncs_by_volume ON volume_syncs (volume_id, created_at);

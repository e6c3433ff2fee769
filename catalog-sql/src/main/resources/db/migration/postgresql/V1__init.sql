-- The PostgreSQL catalog's first schema: the tables and columns SQLite's scripts reach at their V14,
-- in PostgreSQL's types (a test compares the two). Later changes are new scripts in both folders.
-- Times are fixed-width ISO-8601 UTC text with nanoseconds ("2026-01-02T03:04:05.000000000Z"), as in
-- SQLite: exact for any Instant and ordered as text. Text compares byte by byte (collation "C"), so
-- listings and their cursors order ids and times as SQLite and Java do, whatever the database's locale.
-- JSON stays text, checked by a cast, so both engines store exactly the bytes written.

CREATE DOMAIN ctext AS text COLLATE "C";

CREATE TABLE tenants (
    id                     ctext   NOT NULL PRIMARY KEY,
    name                   ctext   NOT NULL UNIQUE,
    created_at             ctext   NOT NULL,
    max_running_sandboxes  bigint,               -- NULL: unlimited (TenantQuota)
    max_memory_mb          bigint,
    max_disk_mb            bigint
);

INSERT INTO tenants (id, name, created_at)
VALUES ('ten_default', 'default', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.000000000Z');

CREATE TABLE sandboxes (
    id                       ctext   NOT NULL PRIMARY KEY,
    tenant_id                ctext   NOT NULL,
    name                     ctext,                 -- NULL for unnamed sandboxes; NULLs never collide
    template                 ctext   NOT NULL,
    state                    ctext   NOT NULL,      -- SandboxState.wireName()
    state_reason             ctext,                 -- Stopped's reason, else NULL
    hibernated_checkpoint_id ctext,                 -- Hibernated's fields, all set in that state only
    hibernated_image_bytes   bigint,
    hibernated_at            ctext,
    created_at               ctext   NOT NULL,
    cpus                     double precision NOT NULL,
    memory_mb                bigint  NOT NULL,
    pids                     bigint  NOT NULL,
    env                      ctext   NOT NULL CHECK (env::jsonb IS NOT NULL),        -- JSON object of strings
    metadata                 ctext   NOT NULL CHECK (metadata::jsonb IS NOT NULL),   -- JSON object of strings
    parent_id                ctext,                 -- the sandbox it was forked from; no foreign key:
    checkpoint_id            ctext,                 -- lineage outlives the parent and the checkpoint
    lifecycle                ctext   NOT NULL CHECK (lifecycle::jsonb IS NOT NULL),  -- LifecyclePolicy, see LifecycleJson
    disk_mb                  bigint  NOT NULL DEFAULT 10240,
    generation               bigint  NOT NULL DEFAULT 1,
    runtime                  ctext   NOT NULL DEFAULT 'runc',
    UNIQUE (tenant_id, name),
    CHECK (state = 'stopped' OR state_reason IS NULL),
    CHECK (CASE WHEN state = 'hibernated'
                THEN hibernated_checkpoint_id IS NOT NULL AND hibernated_image_bytes IS NOT NULL AND hibernated_at IS NOT NULL
                ELSE hibernated_checkpoint_id IS NULL AND hibernated_image_bytes IS NULL AND hibernated_at IS NULL
           END)
);

CREATE INDEX sandboxes_by_creation ON sandboxes (created_at, id);
CREATE INDEX sandboxes_by_tenant ON sandboxes (tenant_id, created_at, id);
CREATE INDEX sandboxes_by_parent ON sandboxes (parent_id, created_at, id) WHERE parent_id IS NOT NULL;

CREATE TABLE api_keys (
    id          ctext   NOT NULL PRIMARY KEY,
    tenant_id   ctext   NOT NULL,
    secret_hash ctext   NOT NULL UNIQUE,
    root        bigint  NOT NULL CHECK (root IN (0, 1)),
    created_at  ctext   NOT NULL,
    CHECK (root = 0 OR tenant_id = 'ten_default')
);

CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at, id);

CREATE TABLE checkpoints (
    id          ctext   NOT NULL PRIMARY KEY,
    sandbox_id  ctext   NOT NULL,
    name        ctext,
    memory      bigint  NOT NULL CHECK (memory IN (0, 1)),
    purpose     ctext   NOT NULL,               -- Checkpoint.Purpose.wireName()
    size_bytes  bigint  NOT NULL,
    created_at  ctext   NOT NULL,
    spares      bigint  NOT NULL DEFAULT 0 CHECK (spares >= 0),
    runtime     ctext   NOT NULL DEFAULT 'runc'
);

CREATE INDEX checkpoints_by_sandbox ON checkpoints (sandbox_id, created_at, id);

CREATE TABLE operations (
    sandbox_id    ctext NOT NULL PRIMARY KEY,
    kind          ctext NOT NULL,               -- Operation.Kind, lowercase: "hibernate"
    checkpoint_id ctext,
    started_at    ctext NOT NULL
);

CREATE TABLE events (
    id          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          ctext   NOT NULL,
    type        ctext   NOT NULL,
    sandbox_id  ctext,                          -- NULL for events about no single sandbox
    data        ctext   NOT NULL CHECK (jsonb_typeof(data::jsonb) = 'object'),
    tenant_id   ctext
);

CREATE INDEX events_by_sandbox ON events (sandbox_id, id);
CREATE INDEX events_by_tenant ON events (tenant_id, id);

CREATE TABLE sandbox_networks (
    sandbox_id ctext   NOT NULL PRIMARY KEY,
    slot       bigint  NOT NULL UNIQUE CHECK (slot >= 0),
    policy     ctext   NOT NULL CHECK (jsonb_typeof(policy::jsonb) = 'object')  -- see NetworkJson
);

CREATE TABLE previews (
    id          ctext   NOT NULL PRIMARY KEY,
    sandbox_id  ctext   NOT NULL,
    port        bigint  NOT NULL CHECK (port BETWEEN 1 AND 65535),
    public      bigint  NOT NULL CHECK (public IN (0, 1)),
    token_hash  ctext,                              -- hex SHA-256 of the token; NULL when public
    created_at  ctext   NOT NULL,
    expires_at  ctext,                              -- NULL: never
    CHECK ((public = 1) = (token_hash IS NULL))
);

CREATE INDEX previews_by_sandbox ON previews (sandbox_id, created_at, id);

CREATE TABLE secrets (
    tenant_id   ctext   NOT NULL,
    name        ctext   NOT NULL,
    created_at  ctext   NOT NULL,
    sealed      bytea   NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE tokens (
    id           ctext   NOT NULL PRIMARY KEY,
    tenant_id    ctext   NOT NULL,
    secret_hash  ctext   NOT NULL UNIQUE,
    name         ctext,
    scope_kind   ctext   NOT NULL CHECK (scope_kind IN ('sandbox', 'volume')),
    scope_id     ctext   NOT NULL,
    permissions  ctext   NOT NULL CHECK (jsonb_typeof(permissions::jsonb) = 'array'),
    created_at   ctext   NOT NULL,
    expires_at   ctext   NOT NULL
);

CREATE INDEX tokens_by_tenant ON tokens (tenant_id, created_at, id);
CREATE INDEX tokens_by_scope ON tokens (scope_kind, scope_id);

CREATE TABLE checkpoint_uploads (
    checkpoint_id  ctext   NOT NULL PRIMARY KEY,
    state          ctext   NOT NULL CHECK (state IN ('pending', 'durable', 'failed')),
    parent_id      ctext,                        -- the checkpoint the root stream is incremental to
    root_manifest  ctext,
    image_manifest ctext,
    logical_bytes  bigint  NOT NULL,
    stored_bytes   bigint  NOT NULL,
    error          ctext,
    updated_at     ctext   NOT NULL,
    CHECK (state <> 'durable' OR root_manifest IS NOT NULL)
);

CREATE TABLE volumes (
    id          ctext   NOT NULL PRIMARY KEY,
    tenant_id   ctext   NOT NULL,
    name        ctext   NOT NULL,
    size_mb     bigint  NOT NULL,
    created_at  ctext   NOT NULL,
    origin      ctext,                -- the snapshot or sync it was made from, else NULL
    UNIQUE (tenant_id, name)
);

CREATE TABLE sandbox_volumes (
    sandbox_id  ctext   NOT NULL,     -- no foreign key: rows go with the sandbox (SqlCatalog.delete)
    position    bigint  NOT NULL,
    volume_id   ctext   NOT NULL,
    path        ctext   NOT NULL,
    read_only   bigint  NOT NULL CHECK (read_only IN (0, 1)),
    PRIMARY KEY (sandbox_id, position)
);

CREATE INDEX sandbox_volumes_by_volume ON sandbox_volumes (volume_id);

CREATE TABLE volume_snapshots (
    id          ctext   NOT NULL PRIMARY KEY,
    volume_id   ctext   NOT NULL,
    created_at  ctext   NOT NULL
);

CREATE INDEX volume_snapshots_by_volume ON volume_snapshots (volume_id, created_at);

CREATE TABLE volume_syncs (
    id           ctext   NOT NULL PRIMARY KEY,
    volume_id    ctext   NOT NULL,
    volume_name  ctext   NOT NULL,
    size_mb      bigint  NOT NULL,
    streams      ctext   NOT NULL CHECK (streams::jsonb IS NOT NULL),  -- JSON array of manifest ids, oldest first
    parent_id    ctext,
    snapshot     ctext   NOT NULL,
    stream_bytes bigint  NOT NULL,
    created_at   ctext   NOT NULL
);

CREATE INDEX volume_syncs_by_volume ON volume_syncs (volume_id, created_at);

CREATE TABLE sandbox_buckets (
    sandbox_id         ctext   NOT NULL,     -- no foreign key: rows go with the sandbox (SqlCatalog.delete)
    position           bigint  NOT NULL,     -- the mount's index: its host id is <sandbox id>-<position>
    path               ctext   NOT NULL,
    endpoint           ctext   NOT NULL,
    region             ctext   NOT NULL,
    bucket             ctext   NOT NULL,
    prefix             ctext   NOT NULL,     -- '' for the whole bucket
    read_only          bigint  NOT NULL CHECK (read_only IN (0, 1)),
    credentials_secret ctext   NOT NULL,
    PRIMARY KEY (sandbox_id, position)
);

CREATE TABLE durable_images (
    sandbox_id    ctext PRIMARY KEY,
    checkpoint_id ctext NOT NULL,
    digest        ctext NOT NULL,
    taken_at      ctext NOT NULL
);

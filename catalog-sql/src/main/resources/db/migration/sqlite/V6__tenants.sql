-- Tenants, their keys and scoped tokens. Every sandbox, API key, secret and event now belongs to
-- a tenant; what existed before belongs to the default tenant, the operator's (root key's) own.
-- Sandbox names and secret names become unique per tenant, so tables whose UNIQUE or PRIMARY KEY
-- changes are rebuilt (create-copy-drop-rename, as in V2); the others gain a column.

CREATE TABLE tenants (
    id                     TEXT    NOT NULL PRIMARY KEY,
    name                   TEXT    NOT NULL UNIQUE,
    created_at             TEXT    NOT NULL,
    max_running_sandboxes  INTEGER,               -- NULL: unlimited (TenantQuota)
    max_memory_mb          INTEGER,
    max_disk_mb            INTEGER
) STRICT;

INSERT INTO tenants (id, name, created_at)
VALUES ('ten_default', 'default', strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000000Z');

CREATE TABLE sandboxes_v6 (
    id                       TEXT    NOT NULL PRIMARY KEY,
    tenant_id                TEXT    NOT NULL,
    name                     TEXT,                  -- NULL for unnamed sandboxes; NULLs never collide
    template                 TEXT    NOT NULL,
    state                    TEXT    NOT NULL,      -- SandboxState.wireName()
    state_reason             TEXT,                  -- Stopped's reason, else NULL
    hibernated_checkpoint_id TEXT,                  -- Hibernated's fields, all set in that state only
    hibernated_image_bytes   INTEGER,
    hibernated_at            TEXT,
    created_at               TEXT    NOT NULL,
    cpus                     REAL    NOT NULL,
    memory_mb                INTEGER NOT NULL,
    pids                     INTEGER NOT NULL,
    env                      TEXT    NOT NULL CHECK (json_valid(env)),       -- JSON object of strings
    metadata                 TEXT    NOT NULL CHECK (json_valid(metadata)),  -- JSON object of strings
    parent_id                TEXT,                  -- the sandbox it was forked from; no foreign key:
    checkpoint_id            TEXT,                  -- lineage outlives the parent and the checkpoint
    lifecycle                TEXT    NOT NULL CHECK (json_valid(lifecycle)), -- LifecyclePolicy, see LifecycleJson
    UNIQUE (tenant_id, name),
    CHECK (state = 'stopped' OR state_reason IS NULL),
    CHECK (CASE WHEN state = 'hibernated'
                THEN hibernated_checkpoint_id IS NOT NULL AND hibernated_image_bytes IS NOT NULL AND hibernated_at IS NOT NULL
                ELSE hibernated_checkpoint_id IS NULL AND hibernated_image_bytes IS NULL AND hibernated_at IS NULL
           END)
) STRICT;

INSERT INTO sandboxes_v6 (id, tenant_id, name, template, state, state_reason, hibernated_checkpoint_id, hibernated_image_bytes,
                          hibernated_at, created_at, cpus, memory_mb, pids, env, metadata, parent_id, checkpoint_id, lifecycle)
SELECT id, 'ten_default', name, template, state, state_reason, hibernated_checkpoint_id, hibernated_image_bytes,
       hibernated_at, created_at, cpus, memory_mb, pids, env, metadata, parent_id, checkpoint_id, lifecycle
FROM sandboxes;

DROP TABLE sandboxes;  -- drops its indexes with it
ALTER TABLE sandboxes_v6 RENAME TO sandboxes;

-- all() pages in (created_at, id) order; list() for a tenant uses the second index.
CREATE INDEX sandboxes_by_creation ON sandboxes (created_at, id);
CREATE INDEX sandboxes_by_tenant ON sandboxes (tenant_id, created_at, id);
CREATE INDEX sandboxes_by_parent ON sandboxes (parent_id, created_at, id) WHERE parent_id IS NOT NULL;

CREATE TABLE api_keys_v6 (
    id          TEXT    NOT NULL PRIMARY KEY,
    tenant_id   TEXT    NOT NULL,
    secret_hash TEXT    NOT NULL UNIQUE,
    root        INTEGER NOT NULL CHECK (root IN (0, 1)),
    created_at  TEXT    NOT NULL,
    CHECK (root = 0 OR tenant_id = 'ten_default')
) STRICT;

INSERT INTO api_keys_v6 (id, tenant_id, secret_hash, root, created_at)
SELECT id, 'ten_default', secret_hash, root, created_at FROM api_keys;

DROP TABLE api_keys;
ALTER TABLE api_keys_v6 RENAME TO api_keys;

CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at, id);

CREATE TABLE secrets_v6 (
    tenant_id   TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    sealed      BLOB    NOT NULL,
    PRIMARY KEY (tenant_id, name)
) STRICT;

INSERT INTO secrets_v6 (tenant_id, name, created_at, sealed) SELECT 'ten_default', name, created_at, sealed FROM secrets;

DROP TABLE secrets;
ALTER TABLE secrets_v6 RENAME TO secrets;

-- NULL for events about no single sandbox, which every tenant sees.
ALTER TABLE events ADD COLUMN tenant_id TEXT;
UPDATE events SET tenant_id = 'ten_default' WHERE sandbox_id IS NOT NULL;

-- eventsAfter(id, tenant): a tenant's events (and those of no sandbox) in id order.
CREATE INDEX events_by_tenant ON events (tenant_id, id);

-- Scoped tokens, stored hashed like keys. Expired ones are removed as new ones are issued.
CREATE TABLE tokens (
    id           TEXT    NOT NULL PRIMARY KEY,
    tenant_id    TEXT    NOT NULL,
    secret_hash  TEXT    NOT NULL UNIQUE,
    name         TEXT,
    scope_kind   TEXT    NOT NULL CHECK (scope_kind IN ('sandbox', 'volume')),
    scope_id     TEXT    NOT NULL,
    permissions  TEXT    NOT NULL CHECK (json_valid(permissions) AND json_type(permissions) = 'array'),
    created_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL
) STRICT;

CREATE INDEX tokens_by_tenant ON tokens (tenant_id, created_at, id);
CREATE INDEX tokens_by_scope ON tokens (scope_kind, scope_id);

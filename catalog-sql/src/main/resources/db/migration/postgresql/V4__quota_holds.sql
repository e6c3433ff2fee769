-- As SQLite's V17: what operations in flight hold of a tenant's quota and of a node's room.
CREATE TABLE quota_holds (
    id                ctext  NOT NULL PRIMARY KEY,
    tenant_id         ctext  NOT NULL,
    node              ctext  NOT NULL,
    running_sandboxes bigint NOT NULL CHECK (running_sandboxes >= 0),
    memory_mb         bigint NOT NULL CHECK (memory_mb >= 0),
    disk_mb           bigint NOT NULL CHECK (disk_mb >= 0),
    created_at        ctext  NOT NULL
);

CREATE INDEX quota_holds_by_tenant ON quota_holds (tenant_id);
CREATE INDEX quota_holds_by_node ON quota_holds (node);

-- What operations in flight hold of a tenant's quota and of a node's room, from their admission to their end.
CREATE TABLE quota_holds (
    id                TEXT    NOT NULL PRIMARY KEY,
    tenant_id         TEXT    NOT NULL,
    node              TEXT    NOT NULL,
    running_sandboxes INTEGER NOT NULL CHECK (running_sandboxes >= 0),
    memory_mb         INTEGER NOT NULL CHECK (memory_mb >= 0),
    disk_mb           INTEGER NOT NULL CHECK (disk_mb >= 0),
    created_at        TEXT    NOT NULL
);

CREATE INDEX quota_holds_by_tenant ON quota_holds (tenant_id);
CREATE INDEX quota_holds_by_node ON quota_holds (node);

-- Secrets: values the egress proxy adds to sandboxes' HTTPS requests. Service-wide (tenants come
-- later). `sealed` is AES-256-GCM under a key kept in its own file next to the database
-- (SecretCipher), so this table alone does not reveal any value.

CREATE TABLE secrets (
    name        TEXT    NOT NULL PRIMARY KEY,
    created_at  TEXT    NOT NULL,
    sealed      BLOB    NOT NULL
) STRICT;

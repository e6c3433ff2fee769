-- Sandbox networks: each sandbox's slot in the address range (its veth name and addresses derive
-- from it, so they stay the same across hibernation and restarts of the service) and its network
-- policy. A row lives as long as its sandbox; delete() removes both in one transaction.

CREATE TABLE sandbox_networks (
    sandbox_id TEXT    NOT NULL PRIMARY KEY,
    slot       INTEGER NOT NULL UNIQUE CHECK (slot >= 0),
    policy     TEXT    NOT NULL CHECK (json_valid(policy) AND json_type(policy) = 'object')  -- see NetworkJson
) STRICT;

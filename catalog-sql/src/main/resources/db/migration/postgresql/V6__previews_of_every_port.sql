-- A preview may expose every port of its sandbox (port 0), as E2B's sandboxes do by default.
ALTER TABLE previews DROP CONSTRAINT previews_port_check;
ALTER TABLE previews ADD CONSTRAINT previews_port_check CHECK (port BETWEEN 0 AND 65535);

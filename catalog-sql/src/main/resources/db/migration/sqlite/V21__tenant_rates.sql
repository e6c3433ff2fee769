-- How fast a tenant may call: its API calls a second (all its credentials together) and their burst,
-- and its creates a minute; NULL: the operator's default.
ALTER TABLE tenants ADD COLUMN requests_per_second INTEGER;
ALTER TABLE tenants ADD COLUMN request_burst INTEGER;
ALTER TABLE tenants ADD COLUMN creates_per_minute INTEGER;

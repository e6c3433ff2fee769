-- As SQLite's V21: how fast a tenant may call (NULL: the operator's default).
ALTER TABLE tenants ADD COLUMN requests_per_second INTEGER;
ALTER TABLE tenants ADD COLUMN request_burst INTEGER;
ALTER TABLE tenants ADD COLUMN creates_per_minute INTEGER;

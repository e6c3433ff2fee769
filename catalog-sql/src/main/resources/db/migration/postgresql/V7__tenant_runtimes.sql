-- As SQLite's V20: the runtimes a tenant's sandboxes may start in, comma-separated; NULL: any the service runs.
ALTER TABLE tenants ADD COLUMN runtimes TEXT;

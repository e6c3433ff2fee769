-- The runtimes a tenant's sandboxes may start in (e.g. 'gvisor'), comma-separated; NULL: any the service runs.
ALTER TABLE tenants ADD COLUMN runtimes TEXT;

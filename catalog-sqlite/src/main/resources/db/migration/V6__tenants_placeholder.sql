-- Placeholder on the disk-limit branch only: V6 is the tenants migration, written at the same
-- time on another branch. On merge this file goes and the tenants V6 takes its place; disk limits
-- stay V7. It changes nothing, so a database it was applied to differs from V5 in its version only.
SELECT 1;

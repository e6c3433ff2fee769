-- How many forks of a memory checkpoint the service keeps restored ahead (ForkSpares): kept here so
-- that the spares come back after a restart. The spares themselves are never recorded.

ALTER TABLE checkpoints ADD COLUMN spares INTEGER NOT NULL DEFAULT 0 CHECK (spares >= 0);

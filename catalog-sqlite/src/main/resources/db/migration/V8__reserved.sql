-- Placeholder for the V8 migration of the durable-checkpoints branch, so that this branch's V9
-- applies in order (Migrations refuses gaps). On merge, the real V8 replaces this file.
DROP TABLE IF EXISTS reserved_v8_placeholder;

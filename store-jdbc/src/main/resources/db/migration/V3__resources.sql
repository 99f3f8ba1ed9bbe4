-- What limits a run had, what it used, and which limit (if any) stopped it.
ALTER TABLE runs ADD COLUMN kill_reason VARCHAR(32);
ALTER TABLE runs ADD COLUMN limits_json TEXT;
ALTER TABLE runs ADD COLUMN peak_memory_bytes BIGINT;
ALTER TABLE runs ADD COLUMN cpu_millis BIGINT;

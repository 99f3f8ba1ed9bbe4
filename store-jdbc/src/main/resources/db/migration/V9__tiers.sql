-- Tiers: the tier a run's sandbox had (a session's runs have the session's), and the tier each
-- session was made with. Null for what was recorded before tiers (it ran as today's basic does,
-- without an import policy).
ALTER TABLE runs ADD COLUMN tier VARCHAR(64);
ALTER TABLE sessions ADD COLUMN tier VARCHAR(64);

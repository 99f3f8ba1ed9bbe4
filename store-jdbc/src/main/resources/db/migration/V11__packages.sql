-- Packages: what a run asked for (canonical PEP 508 requirements, a JSON array), the key of the
-- package environment its sandbox had, and that environment's pip freeze; the same for sessions
-- (a session's packages are fixed when it is made). Null for runs and sessions without packages.
ALTER TABLE runs ADD COLUMN packages_json TEXT;
ALTER TABLE runs ADD COLUMN environment VARCHAR(64);
ALTER TABLE runs ADD COLUMN pip_freeze TEXT;
ALTER TABLE sessions ADD COLUMN packages_json TEXT;
ALTER TABLE sessions ADD COLUMN environment VARCHAR(64);
CREATE INDEX runs_environment ON runs (environment);

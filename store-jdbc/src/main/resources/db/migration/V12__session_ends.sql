-- How a session ended, so that a call naming it within session_retention is told (session_expired,
-- session_closed, session_lost, or the error its creation failed with) instead of getting a new,
-- empty session under its name, whichever server of this data directory it asks, and after a
-- restart. closed_at is when. Null for rows that are open, and for those closed before this
-- migration (how they ended is not known: their ids are free, as they were).
--   ended_as    expired | closed | lost | failed
--   end_code    for failed: the wire name of the creation's error code
--   end_detail  why, in words
ALTER TABLE sessions ADD COLUMN ended_as VARCHAR(16);
ALTER TABLE sessions ADD COLUMN end_code VARCHAR(32);
ALTER TABLE sessions ADD COLUMN end_detail TEXT;

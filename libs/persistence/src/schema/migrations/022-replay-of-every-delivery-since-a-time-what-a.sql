-- replay of every delivery since a time: what a replayed delivery was
-- A replay of "everything since a time" sends deliveries that succeeded, or failed for good, once more: each is
-- a pending row of deliveries again (one from delivery_log is moved back here, with its id, seq and attempts),
-- marked with the status it had. The mark lets the claim tell a replay from live traffic: a replay is sent only
-- while no newer version of its plant has gone to the subscriber meanwhile (replayCurrent), else it goes back
-- to that status unsent ('succeeded' or 'failed'; the statements that write it are the only ones). Null for every
-- other row, so nullable with no default and no CHECK: no table is rewritten, nor scanned under its lock.

      ALTER TABLE deliveries ADD COLUMN replayed_from text;

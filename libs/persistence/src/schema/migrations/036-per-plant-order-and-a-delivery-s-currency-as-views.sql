-- per-plant order and a delivery's currency, as views
-- Rules the claim, the ingest statement and the fan-out share, written once here rather than pasted into each as
-- text (issue #38). Views, not functions: PostgreSQL flattens a view into the statement that reads it, so an
-- EXISTS written against one is planned as the pasted text was (a function whose body holds a subquery is not
-- inlined: it would run once per row).

      -- Per-plant order, per subscriber: a delivery waits while an earlier one (lower seq) for the same subscriber
      -- and plant is pending. A delivery being written has no row yet: every pending one is earlier.
      CREATE VIEW pending_deliveries AS
      SELECT d.id, d.subscription_id, d.plant_id, d.event_id, d.seq FROM deliveries d WHERE d.status = 'pending';

      -- Per-plant order between events: an event is fanned out only once every earlier event of its plant has been.
      CREATE VIEW pending_events AS
      SELECT e.event_id, e.plant_id, e.seq FROM outbox_events e WHERE e.fanned_out_at IS NULL;

      -- Whether a stored delivery is still current, as the claim asks it of each row (its newest version, once
      -- locked). `backfill_current`: a backfill's delivery carries the plant as it was when queued (origin_event_id: the
      -- plant's last event then); once the plant has changed, a newer live event delivers it (per-plant order puts
      -- that one after this row), and this one must not go, or the subscriber would get the older version after,
      -- or instead of, the newer one.
      -- `replay_current`: a replayed delivery (replayed_from set) is an old version of its plant sent again; it
      -- may go only while the plant's newest version will reach the subscriber at or after it: it is that version,
      -- or that version's delivery to the subscriber waits behind it (pending, numbered later). Otherwise a newer
      -- version went and this one must not follow it (the claim puts it back to the status it had, unsent).
      CREATE VIEW delivery_currency AS
      -- (Per-plant order is not a column here: a claim asks it of its candidates, as a join, so that it is never
      -- asked of every row when the planner scans the table.)
      SELECT d.id, d.status, d.leased_until, d.replayed_from,
             (d.backfill_id IS NULL OR EXISTS (
                SELECT 1 FROM plants bp WHERE bp.id = d.plant_id AND bp.last_event_id = d.origin_event_id))
               AS backfill_current,
             (d.replayed_from IS NULL OR EXISTS (
                SELECT 1 FROM plants rp WHERE rp.id = d.plant_id AND (rp.last_event_id = d.event_id OR EXISTS (
                  SELECT 1 FROM pending_deliveries newest
                  WHERE newest.subscription_id = d.subscription_id AND newest.plant_id = d.plant_id
                    AND newest.seq > d.seq AND newest.event_id = rp.last_event_id))))
               AS replay_current
      FROM deliveries d;

-- a delivery's due time beside its currency
-- The claim locks its deliveries by key alone and asks the rest of the row as locked, oldest due first (issue 35,
-- found by the statements' eight-claimer race): the view it reads them through gives their due time too. The
-- rules are migration 36's, unchanged.

      CREATE OR REPLACE VIEW delivery_currency AS
      SELECT d.id, d.status, d.leased_until, d.replayed_from,
             (d.backfill_id IS NULL OR EXISTS (
                SELECT 1 FROM plants bp WHERE bp.id = d.plant_id AND bp.last_event_id = d.origin_event_id))
               AS backfill_current,
             (d.replayed_from IS NULL OR EXISTS (
                SELECT 1 FROM plants rp WHERE rp.id = d.plant_id AND (rp.last_event_id = d.event_id OR EXISTS (
                  SELECT 1 FROM pending_deliveries newest
                  WHERE newest.subscription_id = d.subscription_id AND newest.plant_id = d.plant_id
                    AND newest.seq > d.seq AND newest.event_id = rp.last_event_id))))
               AS replay_current,
             d.next_attempt_at
      FROM deliveries d;

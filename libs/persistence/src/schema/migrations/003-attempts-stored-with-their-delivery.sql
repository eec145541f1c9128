-- attempts stored with their delivery
-- Recording an attempt was an UPDATE of the delivery plus an INSERT with two index entries and a
-- foreign-key check (a row lock on the delivery it had just updated): measured, the biggest share of the
-- database's time per delivery. Now it is the UPDATE alone, appending to the delivery's own log.

      ALTER TABLE deliveries ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]';
      UPDATE deliveries d SET attempt_log = a.log
      FROM (
        SELECT delivery_id, jsonb_agg(jsonb_build_object(
                 'attemptedAt', attempted_at, 'status', status, 'latencyMs', latency_ms,
                 'error', error, 'responseBody', response_body) ORDER BY id) AS log
        FROM delivery_attempts GROUP BY delivery_id
      ) a
      WHERE a.delivery_id = d.id;
      DROP TABLE delivery_attempts;
      -- A queue table: most rows turn from pending to done within a second, and claims walk the pending index
      -- past their dead versions until a vacuum removes them. Vacuum it after 2 % changed, not PostgreSQL's 20 %.
      ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
                                  autovacuum_vacuum_insert_scale_factor = 0.02);

-- The ingest statement: events stored as plants, with the outbox rows and the deliveries they owe.

-- @name apply-events
-- The ingest statement: the one place that writes several tables. One statement, one round trip, for a whole
-- batch: record the event ids (duplicates drop out), keep the latest event per plant, upsert it unless the
-- stored plant comes from a newer event or already holds the same data (an update that changes nothing
-- changes and sends nothing: that is what ends an echo loop), and write one outbox row for every plant that
-- changed (the transactional outbox), unless its event has already been through MAX_WEBHOOK_HOPS deliveries
-- (a loop that changes data) or no enabled subscription's filter lets it through.
--
-- The caller's dispatcher takes the new events on at once, as the fan-out (fan-out.sql) would but without a statement of its
-- own: in event order, while their deliveries to send fit its room, each event no earlier one of its plant is
-- still being fanned out, they are written leased to it and the (event, subscriber) pairs to send from memory
-- come back (a delivery that must wait is written as a row, as in the fan-out). Nobody else can see these rows before
-- the commit. The other events are left for the fan-out (by any replica).
--
-- Who receives an event is the caller's to say: its worker holds the enabled subscriptions in memory and sends
-- the pairs their filters let through, with the version of the subscriptions they come from. A subscription
-- changed since that version (subscription_changes names it, migration 30) is asked here instead: whether it
-- receives each event (plant_subscribers), and its deliveries are written as rows, since the caller's copy of its
-- URL and credentials is old; the caller reloads it. Every other pair is used as given: one portal link changing
-- its own subscription in a loop no longer sends every subscriber's deliveries the slow way (bench:noisy-neighbour,
-- the nine's slowest seconds followed its accepted changes). Only when the log no longer names every change since
-- the caller's version is every changed plant's event written for the fan-out, which reads the subscriptions
-- itself.
-- Sent named by IngestRepository.applyEvents: each connection parses and plans it once, not once per batch.
-- Stored rows are read by key, one probe per event (a LATERAL sub-SELECT behind OFFSET 0, a scalar sub-SELECT with a
-- LIMIT), never by a join the planner may turn into a scan: plans cached while the tables were small, or made from
-- statistics older than the last minute's growth, scanned every plant and every event id on each batch
-- (bench:noisy-neighbour: 9,840 rows of each read for a batch of two, 19 ms a call, growing with the tables).
-- :eventIds the events' ids
-- :plantIds their plants' ids
-- :names the plants' names
-- :tags the plants' tags
-- :eventTimes the events' times
-- :topics the Kafka topics they were read from
-- :partitions their partitions
-- :offsets their offsets
-- :hops their hops (deliveries they have been through)
-- :originEventIds their origin events' ids
-- :maxHops MAX_WEBHOOK_HOPS: an event with as many hops is stored but sends nothing
-- :extras the events' other plant properties (jsonb)
-- :traceparents their traceparents
-- :digests their plants' digests (a reused event id with another plant shows)
-- :room the room: deliveries the dispatcher can send from memory
-- :deferSubscriptions subscriptions saturated there (their deliveries are written to wait)
-- :leaseMs the lease, ms
-- :leaseToken the lease's token
-- :pairEventIds with :pairSubscriptionIds, each (event, subscription) pair the caller's filters let through, the event's id
-- :pairSubscriptionIds the pair's subscription
-- :version the version of the subscriptions the pairs come from
-- :bodies the events' bodies (the NewPlant sent)
WITH input AS (
  SELECT * FROM unnest(:eventIds::text[], :plantIds::bigint[], :names::text[], :tags::text[], :eventTimes::timestamptz[], :topics::text[], :partitions::int[], :offsets::bigint[],
                       :hops::int[], :originEventIds::text[], :extras::jsonb[], :traceparents::text[], :digests::text[],
                       :bodies::text[])
    AS t(event_id, plant_id, name, tag, event_time, topic, kafka_partition, kafka_offset, hops, origin_event_id, extra,
         traceparent, digest, body)
), changed_since AS MATERIALIZED (
  -- The subscriptions changed since the caller's copy (none while it is current).
  SELECT c.version, c.subscription_id FROM subscription_changes c WHERE c.version > :version::bigint
), current AS MATERIALIZED (
  -- `ok`: the caller's subscriptions are the stored ones. `known`: or the log names every change since (versions
  -- have no gaps), so the caller's pairs hold for every subscription but those.
  SELECT v.version = :version::bigint AS ok,
         v.version >= :version::bigint AND v.version - :version::bigint = (SELECT count(*) FROM changed_since) AS known
  FROM subscription_versions v
), stale AS MATERIALIZED (
  SELECT DISTINCT subscription_id AS id FROM changed_since
), pairs AS (
  -- Each pair once, however often the caller gave it: fanout joins each to its event, and a pair given twice
  -- would be handed back twice to send. The caller's, but for the subscriptions changed since its copy: those
  -- asked here.
  SELECT DISTINCT * FROM unnest(:pairEventIds::text[], :pairSubscriptionIds::uuid[]) AS p(event_id, subscription_id)
  WHERE (SELECT known FROM current) AND p.subscription_id NOT IN (SELECT id FROM stale)
  UNION
  SELECT i.event_id, s.id FROM stale st JOIN plant_subscribers s ON s.id = st.id, input i
  WHERE (SELECT known FROM current) AND plant_matches_filter(s.filter, i.plant_id, i.tag)
), firsts AS (
  -- One row per event id: the first by offset (a record redelivered within a batch is the same event).
  SELECT DISTINCT ON (event_id) * FROM input ORDER BY event_id, kafka_partition, kafka_offset
), fresh AS (
  INSERT INTO processed_events (event_id, plant_id, event_time, kafka_topic, kafka_partition, kafka_offset, digest)
  SELECT event_id, plant_id, event_time, topic, kafka_partition, kafka_offset, digest FROM firsts
  ON CONFLICT (event_id) DO NOTHING
  RETURNING event_id
), key_reused AS (
  -- The same event id with another plant: a sender reused an idempotency key on a gateway replica that had not
  -- seen it. Compared with what was stored before (this statement's snapshot) and within the batch; the plant
  -- that came first stays, the other is reported and not stored.
  SELECT i.kafka_partition || ':' || i.kafka_offset AS at
  FROM input i, LATERAL (SELECT p.digest FROM processed_events p WHERE p.event_id = i.event_id OFFSET 0) p
  WHERE p.digest IS NOT NULL AND p.digest <> i.digest
  UNION
  SELECT i.kafka_partition || ':' || i.kafka_offset FROM input i JOIN firsts f USING (event_id)
  WHERE (i.kafka_partition, i.kafka_offset) <> (f.kafka_partition, f.kafka_offset) AND i.digest <> f.digest
), latest AS (
  SELECT DISTINCT ON (i.plant_id) i.* FROM firsts i JOIN fresh f USING (event_id)
  ORDER BY i.plant_id, i.event_time DESC, i.kafka_offset DESC
), unchanged AS (
  -- Read from the snapshot before the upsert: newer than what is stored, but the same data.
  SELECT l.event_id FROM latest l, LATERAL (SELECT p.* FROM plants p WHERE p.id = l.plant_id OFFSET 0) p
  WHERE p.last_event_time <= l.event_time AND p.name = l.name AND p.tag IS NOT DISTINCT FROM l.tag AND p.extra = l.extra
), upserted AS (
  INSERT INTO plants AS p (id, name, tag, extra, last_event_id, last_event_time)
  SELECT plant_id, name, tag, extra, event_id, event_time FROM latest
  ON CONFLICT (id) DO UPDATE
    SET name = EXCLUDED.name, tag = EXCLUDED.tag, extra = EXCLUDED.extra, updated_at = now(),
        last_event_id = EXCLUDED.last_event_id, last_event_time = EXCLUDED.last_event_time
    WHERE p.last_event_time <= EXCLUDED.last_event_time
      AND (p.name, p.tag, p.extra) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.tag, EXCLUDED.extra)
  RETURNING p.id, p.name, p.tag, p.extra, p.last_event_id, p.last_event_time
), changed AS (
  SELECT u.*, l.hops, l.origin_event_id, l.traceparent, l.body FROM upserted u JOIN latest l ON l.event_id = u.last_event_id
), to_outbox AS (
  SELECT last_event_id AS event_id, id AS plant_id, tag, last_event_time AS event_time, hops, origin_event_id,
         traceparent, body,
         (SELECT p.plant_id FROM pending_events p WHERE p.plant_id = c.id LIMIT 1) IS NULL AS free
  FROM changed c
  -- IN, not a correlated EXISTS: one hashed look-up per event, not a scan of the pairs.
  WHERE hops < :maxHops AND (c.last_event_id IN (SELECT event_id FROM pairs)
                        OR NOT (SELECT known FROM current) AND EXISTS (SELECT 1 FROM plant_subscribers))
), fanout AS (
  SELECT t.event_id, t.event_time, t.plant_id, p.subscription_id,
         NOT (p.subscription_id = ANY(:deferSubscriptions::uuid[])) AND p.subscription_id NOT IN (SELECT id FROM stale)
           AND NOT EXISTS (SELECT 1 FROM pending_deliveries w
                           WHERE w.subscription_id = p.subscription_id AND w.plant_id = t.plant_id) AS sendable
  FROM to_outbox t JOIN pairs p USING (event_id)
  WHERE t.free
), per_event AS (
  SELECT event_id, count(*) FILTER (WHERE sendable) AS sending,
         sum(count(*) FILTER (WHERE sendable)) OVER (ORDER BY min(event_time), min(plant_id), event_id) AS upto
  FROM fanout GROUP BY event_id
), taken AS (
  SELECT event_id, sending FROM per_event WHERE upto <= :room
  UNION ALL -- no subscriber's filter lets it through: nothing to send, done now
  SELECT t.event_id, 0 FROM to_outbox t
  WHERE t.free AND (SELECT known FROM current) AND NOT EXISTS (SELECT 1 FROM fanout f WHERE f.event_id = t.event_id)
), outbox AS (
  INSERT INTO outbox_events (event_id, plant_id, tag, body, event_time, hops, origin_event_id, traceparent,
                             leased_until, lease_token, fanned_out_at)
  SELECT t.event_id, t.plant_id, t.tag, t.body, t.event_time, t.hops, t.origin_event_id, t.traceparent,
         CASE WHEN k.event_id IS NOT NULL THEN now() + :leaseMs * interval '1 millisecond' END,
         CASE WHEN k.event_id IS NOT NULL THEN :leaseToken::uuid END,
         CASE WHEN k.sending = 0 THEN now() END -- nothing to send from memory: done now
  FROM to_outbox t LEFT JOIN taken k USING (event_id)
  ORDER BY t.event_time, t.plant_id -- numbered in event order: fanned out in it
  ON CONFLICT (event_id) DO NOTHING
  RETURNING event_id
), deferred AS (
  -- The ones that must wait: pending rows, numbered in the events' order (the claims keep it).
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id, traceparent)
  SELECT f.subscription_id, e.event_id, e.plant_id, e.body, e.event_time, e.hops, e.origin_event_id, e.traceparent
  FROM fanout f JOIN taken USING (event_id) JOIN to_outbox e USING (event_id) WHERE NOT f.sendable
  ORDER BY e.event_time, e.plant_id, f.subscription_id
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING subscription_id
)
SELECT (SELECT coalesce(array_agg(event_id), '{}') FROM fresh) AS fresh,
       (SELECT coalesce(array_agg(last_event_id), '{}') FROM upserted) AS applied,
       (SELECT coalesce(array_agg(event_id), '{}') FROM unchanged) AS unchanged,
       (SELECT coalesce(array_agg(at), '{}') FROM key_reused) AS key_reused,
       (SELECT coalesce(json_agg(json_build_object('eventId', last_event_id, 'plantId', id, 'hops', hops, 'originEventId', origin_event_id)), '[]')
          FROM changed WHERE hops >= :maxHops) AS suppressed,
       (SELECT count(*) FROM outbox)::int AS outboxed,
       (SELECT count(*) FROM taken)::int AS taken,
       (SELECT count(*) FROM deferred)::int AS deferred,
       -- Whose they are: a shut subscriber's rows wait for its gate to open, and must not make anyone claim.
       (SELECT coalesce(array_agg(DISTINCT subscription_id::text), '{}') FROM deferred) AS deferred_for,
       (SELECT ok FROM current) AS current,
       sending.*
FROM (SELECT coalesce(array_agg(f.event_id), '{}') AS sending_events,
             coalesce(array_agg(f.subscription_id::text), '{}') AS sending_subscriptions
      FROM fanout f JOIN taken USING (event_id) WHERE f.sendable) sending;

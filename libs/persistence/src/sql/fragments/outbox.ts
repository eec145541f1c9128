// The SQL rules every statement that touches the outbox shares, each written once: per-plant order, who
// receives a plant, the columns a delivery is sent with, and an attempt as its log records it. Every statement
// (deliveries/, ingest/, subscriptions/) takes them from here, so each rule has one text.

/**
 * Per-plant order, per subscriber: a delivery waits while an earlier one for the same subscriber and plant is
 * pending. `seq` bounds "earlier" when the delivery is already stored; a delivery being written has no row yet,
 * so every pending one the statement can see is earlier. (Its own alias is one no caller uses: FAN_OUT's events
 * are `e`, and an inner `e` made `e.plant_id = e.plant_id` hold for every plant, so any pending delivery of a
 * subscriber held back all its new deliveries, as rows.)
 */
export const noEarlierPending = (subscriptionId: string, plantId: string, seq?: string) => `NOT EXISTS (
  SELECT 1 FROM deliveries earlier
  WHERE earlier.subscription_id = ${subscriptionId} AND earlier.plant_id = ${plantId} AND earlier.status = 'pending'${seq ? ` AND earlier.seq < ${seq}` : ''})`;

/**
 * Per-plant order between events: an event is fanned out only once every earlier event of its plant has been
 * (each subscriber's delivery of it written). `seq` bounds "earlier" when the event is already stored; an event
 * being written has no row yet, so every one not yet fanned out that the statement can see is earlier.
 */
export const noEarlierEventPending = (plantId: string, seq?: string) => `NOT EXISTS (
  SELECT 1 FROM outbox_events p
  WHERE p.plant_id = ${plantId} AND p.fanned_out_at IS NULL${seq ? ` AND p.seq < ${seq}` : ''})`;

/**
 * A backfill's delivery carries the plant as it was when queued (`origin_event_id`: the plant's last event then).
 * Once the plant has changed, a newer live event delivers it (per-plant order puts that one after this row): this
 * one must not go, or the subscriber would get the older version after, or instead of, the newer one.
 */
export const backfillCurrent = (d: string) => `(${d}.backfill_id IS NULL OR EXISTS (
    SELECT 1 FROM plants bp WHERE bp.id = ${d}.plant_id AND bp.last_event_id = ${d}.origin_event_id))`;

/**
 * A replayed delivery (`replayed_from` set: see replay-since) is an old version of its plant sent again. It may go
 * only while the plant's newest version will reach the subscriber at or after it: it is that version, or that
 * version's delivery to the subscriber waits behind it (pending, numbered later: per-plant order sends it after).
 * Otherwise a newer version went (or is on the wire from memory: its ingest statement began before the replay was
 * committed and did not see it) and this one must not follow it. The claim leaves such a row and puts it back to
 * the status it had (CLAIM's `superseded`), unsent. Live rows (`replayed_from` null) pass.
 */
export const replayCurrent = (d: string) => `(${d}.replayed_from IS NULL OR EXISTS (
    SELECT 1 FROM plants rp WHERE rp.id = ${d}.plant_id AND (rp.last_event_id = ${d}.event_id OR EXISTS (
      SELECT 1 FROM deliveries newest
      WHERE newest.subscription_id = ${d}.subscription_id AND newest.plant_id = ${d}.plant_id
        AND newest.status = 'pending' AND newest.seq > ${d}.seq AND newest.event_id = rp.last_event_id))))`;

/**
 * The key of a subscriber's delivery of an event, the same whichever fan-out sends it: the id of its row in
 * delivery_log (the append-only log of deliveries that succeeded at once), so that a record finds a delivery the
 * log holds already through the id index it has anyway.
 */
export const deliveryKey = (eventId: string, subscriptionId: string) =>
  `md5(${eventId} || '/' || ${subscriptionId}::text)::uuid`;

/**
 * The log's rows of a delivery of an event created at `since`: written after it, so only the partitions from then
 * on are searched (a minute's margin for a clock set back).
 */
export const inLogSince = (log: string, since: string) =>
  `${log}.created_at >= coalesce(${since} - interval '1 minute', '-infinity')`;

/**
 * Whether the subscriber's delivery of the event (created at `since`) is written: a row in deliveries (it waited,
 * or its first attempt did not succeed), or one in delivery_log (it did). A delivery is in one of the two.
 */
export const deliveryRecorded = (subscriptionId: string, eventId: string, since: string) => `(
  EXISTS (SELECT 1 FROM deliveries rec WHERE rec.subscription_id = ${subscriptionId} AND rec.event_id = ${eventId})
  OR EXISTS (SELECT 1 FROM delivery_log rec WHERE rec.id = ${deliveryKey(eventId, subscriptionId)}
               AND ${inLogSince('rec', since)}))`;

/** The event's columns a delivery row copies (the row that waits carries its own body). */
export const EVENT_DELIVERY_COLUMNS = (e: string) =>
  ['event_id', 'plant_id', 'body', 'event_time', 'hops', 'origin_event_id', 'traceparent'].map((c) => `${e}.${c}`);

/**
 * A fanned-out delivery as the fan-outs hand it back (a SendRow with no id: its row is not written yet), from
 * the fan-out row `f` and its event `e`, with SUBSCRIPTION_SEND_COLUMNS.
 */
export const FANNED_OUT_SEND_COLUMNS = (f: string, e: string) =>
  `NULL::uuid AS id, ${f}.subscription_id, ${e}.event_id, ${e}.plant_id, ${e}.body, ${e}.event_time, 0 AS attempts,
   ${e}.hops, ${e}.origin_event_id, ${e}.traceparent, ${SUBSCRIPTION_SEND_COLUMNS}`;

/**
 * Writes the deliveries of `source` (fan-out row `f` joined to its event `e`) that must wait, as pending rows
 * numbered in the events' order (the claims keep it).
 */
export const writeWaiting = (source: string, order: string) => `
  INSERT INTO deliveries (subscription_id, event_id, plant_id, body, event_time, hops, origin_event_id, traceparent)
  SELECT f.subscription_id, ${EVENT_DELIVERY_COLUMNS('e').join(', ')}
  FROM ${source}
  ORDER BY ${order}, f.subscription_id
  ON CONFLICT (subscription_id, event_id) DO NOTHING
  RETURNING 1`;

/** The subscriber's filter (SubscriptionFilter), for the subscription `s` and a plant's id and tag. */
export const matchesFilter = (s: string, plantId: string, tag: string) =>
  `plant_matches_filter(${s}.filter, ${plantId}, ${tag})`;

/** One entry of a delivery's attempt log, from a row `r` of attempt columns (see AttemptRecord). */
export const attemptEntry = (r: string) => `jsonb_build_object(
  'attemptedAt', ${r}.attempted_at, 'status', ${r}.status, 'latencyMs', ${r}.latency_ms,
  'error', ${r}.error, 'responseBody', ${r}.response_body, 'signature', ${r}.signature)`;

/** `more` (a jsonb array of attempts) added to `log`, of which the newest 20 are kept (migration 26). */
export const appendAttempts = (log: string, more: string) => `append_attempts(${log}, ${more})`;

/** A delivery written from memory made one attempt, or none when it was set aside unsent (no attempt time). */
export const attemptCount = (r: string) => `CASE WHEN ${r}.attempted_at IS NULL THEN 0 ELSE 1 END`;

/** Its log as first written: its attempt, or nothing when it was set aside unsent. */
export const attemptLog = (r: string) =>
  `CASE WHEN ${r}.attempted_at IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(${attemptEntry(r)}) END`;

/**
 * A subscriber that said 410 Gone is disabled by the worker, and the audit trail shows it beside the admins'
 * changes. `source` yields (subscription_id, disable_reason) rows. Two CTEs: `disabled` (id, disabled_reason of
 * each subscription disabled now, for subscriptionDisabledEvents) and `disabled_audit`.
 */
export const disableGone = (source: string) => `disabled AS (
  UPDATE subscriptions s SET enabled = false, disabled_reason = g.disable_reason, updated_at = now()
  FROM (SELECT DISTINCT ON (subscription_id) subscription_id, disable_reason FROM ${source}
        WHERE disable_reason IS NOT NULL) g
  WHERE s.id = g.subscription_id AND s.enabled
  RETURNING s.id, s.disabled_reason
), ${auditWorkerDisabled('disabled')}`;

/** `disabled_audit`: the worker's audit event for each subscription it just disabled, rows (id, disabled_reason). */
export const auditWorkerDisabled = (disabled: string) => `disabled_audit AS (
  INSERT INTO audit_events (actor, action, subscription_id, details)
  SELECT a.* FROM ${disabled} x, worker_disabled_audit(x.id, x.disabled_reason) a
  RETURNING 1
)`;

/** Who receives New Plant webhooks: enabled subscriptions of that kind (not operational ones), alias `s`. */
export const receivesPlants = (s: string) => `${s}.enabled AND ${s}.kind = 'plants'`;

/** The delivery's side of a delivery about to be sent, from the outbox row (alias `o`). */
export const DELIVERY_SEND_COLUMNS = (o: string) =>
  [
    'id',
    'subscription_id',
    'event_id',
    'plant_id',
    'body',
    'event_time',
    'attempts',
    'hops',
    'origin_event_id',
    'traceparent',
    'backfill_id',
  ]
    .map((c) => `${o}.${c}`)
    .join(', ');

/**
 * The subscription's columns a delivery is sent with (SendSettings in libs/delivery, sealed), and its current
 * secret. The claim, the outbox write, a test send (SUBSCRIPTION_SEND_COLUMNS) and each worker's copy of its
 * subscribers (LOAD_SUBSCRIBERS) read this one list: a column added here reaches every way a delivery leaves.
 */
export const SUBSCRIPTION_SEND_FIELDS = [
  'url',
  'token',
  'secret',
  'max_deliveries_per_second',
  'max_concurrency',
  'headers',
  'secret_headers',
  'destination',
  'destination_secrets',
] as const;

/**
 * The subscription's side (alias `s`), as both the claim and the outbox write that leases return it: a
 * rotated-out secret still signs until its overlap ends; its limits come along, so the dispatcher applies a limit
 * set a moment ago to the first delivery it sends (not only from its next heartbeat).
 */
export const SUBSCRIPTION_SEND_COLUMNS = `${SUBSCRIPTION_SEND_FIELDS.map((c) => `s.${c}`).join(', ')},
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret`;

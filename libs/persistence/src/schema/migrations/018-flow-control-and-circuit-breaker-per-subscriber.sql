-- flow control and circuit breaker per subscriber
-- Per subscriber: its own limits (split between the live worker replicas, who say they are alive in
-- worker_replicas), a pause it asked for with Retry-After, and its circuit breaker (consecutive failures, since
-- when it fails, the state, when the next probe may go). Every column is nullable or has a constant default:
-- no table is rewritten. Each change of state is written with an audit event by the statement that makes it
-- (libs/persistence/src/subscriber-health).

      ALTER TABLE subscriptions
        ADD COLUMN max_deliveries_per_second double precision,
        ADD COLUMN max_concurrency integer,
        ADD COLUMN paused_until timestamptz,
        ADD COLUMN circuit_state text NOT NULL DEFAULT 'closed',
        ADD COLUMN circuit_since timestamptz,
        ADD COLUMN circuit_last_error text,
        ADD COLUMN circuit_probe_at timestamptz,
        ADD COLUMN circuit_probes integer NOT NULL DEFAULT 0,
        ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
        ADD COLUMN failing_since timestamptz;
      CREATE TABLE worker_replicas (
        id      uuid PRIMARY KEY,
        seen_at timestamptz NOT NULL
      );

-- whether the operator disabled a subscription: a portal link cannot enable it again
-- A portal link may disable and enable its own subscription, but what the operator disabled stays disabled
-- until an admin enables it: the update statement refuses a portal link's enable while this is true. Set by an
-- admin's disable, cleared by any enable; the worker's (410, failing too long) and a portal link's leave it
-- false. A constant default: no table is rewritten. The subscriptions an admin disabled before are known by the
-- reason that disable wrote; a portal link's disable wrote the same reason until now, so those count as the
-- operator's too (the safe side: an admin enables them). An older gateway still running meanwhile leaves the
-- column as it is.

      ALTER TABLE subscriptions ADD COLUMN disabled_by_operator boolean NOT NULL DEFAULT false;
      UPDATE subscriptions SET disabled_by_operator = true
       WHERE NOT enabled AND deleted_at IS NULL AND disabled_reason = 'disabled by an admin';

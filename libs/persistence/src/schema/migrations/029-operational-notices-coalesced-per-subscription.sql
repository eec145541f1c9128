-- operational notices coalesced per subscription and window
-- One delivery.exhausted per failing subscription per window (see the `exhaustedNotices` fragment): what was
-- held back meanwhile is counted here and told with the next one.

      CREATE TABLE operational_notices (
        subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        type text NOT NULL,
        window_ends timestamptz NOT NULL,
        held integer NOT NULL,
        reported integer NOT NULL,
        PRIMARY KEY (subscription_id, type)
      );

-- a deleted subscription keeps its delivery history
-- Deleting a subscription used to cascade to its deliveries, and an operator investigating a complaint lost
-- the evidence. Now it is marked deleted (credentials dropped, pending deliveries closed as failed) and its
-- deliveries age out with DELIVERY_RETENTION; the row goes once none is left (retention/).

      ALTER TABLE subscriptions ADD COLUMN deleted_at timestamptz;

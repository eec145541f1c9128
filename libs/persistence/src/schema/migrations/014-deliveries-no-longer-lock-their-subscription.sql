-- deliveries no longer lock their subscription
-- The foreign key made every delivery written take a KEY SHARE lock on its subscription's row. Deliveries are
-- now written by several statements at once (the fan-out's records, ingest and the fan-out statement writing
-- rows that wait): on the same few subscription rows, concurrent KEY SHARE locks become MultiXacts. The key
-- guarded nothing left: a subscription is deleted softly (migration 7) and its row removed only once no
-- delivery refers to it (retention), and the statements that write deliveries check it exists.

      ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_subscription_id_fkey;

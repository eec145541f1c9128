-- a delivery carries on the trace of the event that caused it
-- The W3C traceparent of the worker's span that stored the event: every attempt is a child span of it and
-- sends the receiver a traceparent of its own, so one trace goes from sender to subscriber. No default.

      ALTER TABLE deliveries ADD COLUMN traceparent text;

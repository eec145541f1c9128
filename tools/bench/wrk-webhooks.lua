-- The wrk script of bench:gateway (see load.ts): POST /plant/webhook, each request a plant id of its own; with
-- BENCH_KEYED=1 each also with its own webhook-id, so every request is a new idempotency key. Each wrk thread
-- counts in a range of its own (BENCH_ID_BASE + thread * 10^9), so ids never repeat within a run. done() prints
-- one line of JSON, `WRK_JSON {...}`, which load.ts reads.
local next_thread = 0

function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
end

local counter = 0
local base = 0
local keyed = false

function init(args)
  base = tonumber(os.getenv("BENCH_ID_BASE") or "5000000000000") + thread_index * 1000000000
  keyed = os.getenv("BENCH_KEYED") == "1"
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local id = string.format("%.0f", base + counter)
  if keyed then wrk.headers["webhook-id"] = "msg_bench_" .. id end
  return wrk.format(nil, nil, nil, '{"id":' .. id .. ',"name":"Ficus","tag":"indoor"}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"non2xx":%d,"errors":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end

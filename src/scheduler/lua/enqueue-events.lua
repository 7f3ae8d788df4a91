--[[
  enqueue-events: appends inbound events to their rooms' inboxes, in the order given,
  for one lane of one shard in one call (a poller's batch, or one event). Each event
  is queued unless its platform event id was seen in its room within the
  de-duplication window, and, with flood control, unless its sender is over a limit
  (flood.lua; checked after de-duplication, so that a redelivered event neither
  counts as a turn nor is refused). A room no worker holds becomes pending; a held
  room is drained by its holder, which sees the new events before it lets go
  (finish-turn pops atomically), and its running turn is told on the room's channel.
  Then each room of `claims` (those the caller has a free worker slot for) is claimed
  for the caller, as claim-room does, once its events are in.

  KEYS
    pending   the lane's pending zset (room → due, Redis ms)
    running   the lane's running zset (room → lease expiry, Redis ms)
    seen      the event ids seen lately in the shard's rooms (zset of "<room> <id>", score = Redis ms)
    more      then the rooms' keys the ARGS name by their index in KEYS (`…Key`)
  ARGS
    dedupeMs  de-duplication window, ms
    events    {room, id, entry (event JSON), inboxKey, signal (the room's channel),
              flood = {counterKey, noticeQueueKey, noticeRateKey, perMinute, cap} or nil},
              in order
    claims    {room, token, leaseMs, turnRecordMs, takeoverHoldMs (claim.lua), leaseKey,
              inboxKey, sessionKey, turnKey}, or nil
  REPLY
    events    per event: {kind = "queued", becamePending = true when the room became pending
              (wake a worker)}, {kind = "duplicate"} or the flood refusal
    claims    per claim: what claim.lua answers
]]
local now = now_ms()
redis.call("ZREMRANGEBYSCORE", K.seen, "-inf", now - A.dedupeMs)
local out = {}
local held, told = {}, {}
for i, e in ipairs(A.events) do
  -- Ids are the platform's, unique within a room (a resource update posts one id in many).
  local seen = e.room .. " " .. e.id
  if redis.call("ZADD", K.seen, "NX", now, seen) == 0 then
    out[i] = { kind = "duplicate" }
  else
    local inbox = KEYS[e.inboxKey]
    local length = redis.call("RPUSH", inbox, e.entry)
    local f = e.flood
    local refused = f and flood_refusal({
      counter = KEYS[f.counterKey],
      noticeQueue = KEYS[f.noticeQueueKey],
      noticeRate = KEYS[f.noticeRateKey],
      perMinute = f.perMinute,
      cap = f.cap,
    }, inbox, length)
    if refused then
      redis.call("RPOP", inbox)
      redis.call("ZREM", K.seen, seen)
      out[i] = refused
    else
      if held[e.room] == nil then
        local lease = redis.call("ZSCORE", K.running, e.room)
        held[e.room] = lease ~= false and tonumber(lease) > now
      end
      if held[e.room] then
        -- Once per room: a running turn waiting for a /cancel or an answer reads its inbox.
        if not told[e.room] then redis.call("PUBLISH", e.signal, "queued") end
        told[e.room] = true
        out[i] = { kind = "queued", becamePending = false }
      else
        -- NX: a room parked until later keeps its time; a room already pending keeps its place.
        out[i] = { kind = "queued", becamePending = redis.call("ZADD", K.pending, "NX", now, e.room) == 1 }
      end
    end
  end
end
redis.call("PEXPIRE", K.seen, A.dedupeMs)
local claimed = {}
for i, c in ipairs(A.claims or {}) do
  claimed[i] = claim_room({
    pending = K.pending,
    running = K.running,
    lease = KEYS[c.leaseKey],
    inbox = KEYS[c.inboxKey],
    session = KEYS[c.sessionKey],
    turn = KEYS[c.turnKey],
  }, c.room, c.token, c.leaseMs, c.turnRecordMs, now, c.takeoverHoldMs)
end
return cmsgpack.pack({ events = out, claims = claimed })

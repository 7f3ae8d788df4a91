--[[
  Prepended to the scripts that claim rooms (not run on its own). A worker claims one
  named room of a lane: the room must be pending and due, or held under a lease that
  expired (its holder died: takeover). The claim reads in the same call what the
  room's head turn needs, and counts the head turn's computations: a turn with no
  outcome yet gets `computing` incremented here, and a clean park or commit resets
  it, so a count above 1 means earlier holders died while computing it.

  k = {pending, running, lease, inbox, session, turn}. Returns {kind = "claimed", head,
  session (absent when none), record, takeover, now}, {kind = "later", dueInMs},
  {kind = "held"} when a live worker holds it, or {kind = "gone"} when it is neither
  pending nor expired (another worker has it, or its inbox is empty).

  `hold_ms` (nil or 0: none) leaves a room whose lease expired to its holder for that
  much longer ("later"): the caller saw Redis refuse writes lately, so the lease may have
  run out only because no renewal was taken, and its holder renews it once Redis does.
]]
local function claim_room(k, room, token, lease_ms, turn_ms, now, hold_ms)
  local running = redis.call("ZSCORE", k.running, room)
  if running and tonumber(running) > now then return { kind = "held" } end
  if running and hold_ms and hold_ms > 0 then return { kind = "later", dueInMs = hold_ms } end
  local pending = redis.call("ZSCORE", k.pending, room)
  if not pending and not running then return { kind = "gone" } end
  if pending and not running and tonumber(pending) > now then
    return { kind = "later", dueInMs = tonumber(pending) - now }
  end
  local head = redis.call("LINDEX", k.inbox, 0)
  if not head then
    redis.call("ZREM", k.pending, room)
    redis.call("ZREM", k.running, room)
    redis.call("DEL", k.lease)
    return { kind = "gone" }
  end
  keep_lease(k.lease, token, lease_ms)
  redis.call("ZREM", k.pending, room)
  redis.call("ZADD", k.running, now + lease_ms, room)
  local record = record_of(k.turn)
  if not record.outcome then
    local fresh = next(record) == nil
    record.computing = tostring(redis.call("HINCRBY", k.turn, "computing", 1))
    if fresh then redis.call("PEXPIRE", k.turn, turn_ms) end
  end
  local session = redis.call("GET", k.session)
  return {
    kind = "claimed",
    head = head,
    session = session or nil,
    record = record,
    takeover = running ~= false,
    now = now,
  }
end

--[[
  Prepended to every scheduler script (not run on its own): Redis' own clock, the
  lease fence, the turn writes a worker buffers until its next call, and letting go
  of a room. Every key is passed in KEYS by the caller (src/queue/scheduler-scripts.ts);
  a script touches the keys of one shard only, so it runs on one Redis Cluster slot.

  A room is held by the worker whose token is in the room's lease key while the
  room's entry in its lane's `running` zset (score = lease expiry, Redis ms) is in
  the future. If the lease key vanished (a Redis restart or a manual delete) while
  the running entry is still valid, the holder is still the only one allowed in:
  nobody can claim a room before its running entry expires, so the key is restored.

  The running entry decides when another worker may take the room over; the lease
  key, whose token only a claim replaces (and a release deletes), decides who may
  write. The key outlives the entry (LEASE_KEY_LEASES leases), so a holder whose
  entry ran out while Redis could not take its renewals (a failover, a master
  refusing writes) is still the one allowed in until another worker claims the
  room, and carries on: its sent parts get recorded instead of sent again by a
  worker taking over.
]]
local LEASE_KEY_LEASES = 30
local function now_ms()
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function keep_lease(lease, token, lease_ms)
  redis.call("SET", lease, token, "PX", lease_ms * LEASE_KEY_LEASES)
end

local function holds(lease, running, room, token, now)
  local v = redis.call("GET", lease)
  if v == token then return true end
  if v == false then
    local s = redis.call("ZSCORE", running, room)
    local exp = s and tonumber(s) or 0
    if exp > now then
      redis.call("SET", lease, token, "PX", exp - now)
      return true
    end
  end
  return false
end

--[[
  Applies buffered writes (JSON, "" for none):
  commit = {session, idleSeconds, append = [json…], historyCap, reset, outcome, eventId, turnMs}
  sent   = {partKey = ref, …}
  A commit already recorded for the same event (a step retried after its reply was
  lost) is not applied twice, so the history never gets a turn twice.
]]
local function apply_writes(keys, commit_json, sent_json)
  if commit_json ~= "" then
    local c = cjson.decode(commit_json)
    local recorded = redis.call("HMGET", keys.turn, "id", "outcome")
    if not (recorded[1] == c.eventId and recorded[2]) then
      if c.reset then redis.call("DEL", keys.history, keys.offers) end
      redis.call("SET", keys.session, c.session, "EX", c.idleSeconds)
      if #c.append > 0 then
        redis.call("RPUSH", keys.history, unpack(c.append))
        redis.call("LTRIM", keys.history, -c.historyCap, -1)
      end
      redis.call("EXPIRE", keys.history, c.idleSeconds)
      redis.call("EXPIRE", keys.offers, c.idleSeconds)
      redis.call("HSET", keys.turn, "id", c.eventId, "outcome", c.outcome)
      redis.call("PEXPIRE", keys.turn, c.turnMs)
    end
  end
  if sent_json ~= "" then
    for part, ref in pairs(cjson.decode(sent_json)) do
      redis.call("HSET", keys.turn, "part:" .. part, ref)
      redis.call("HDEL", keys.turn, "sending:" .. part)
    end
  end
end

-- Lets go of a room; puts it back in `pending` at `due` when it still has events (or
-- must resume). Returns 1 when the room was made pending, so the caller wakes a worker.
local function release(lease, running, pending, inbox, room, due, force)
  redis.call("DEL", lease)
  redis.call("ZREM", running, room)
  if force or redis.call("LLEN", inbox) > 0 then
    redis.call("ZADD", pending, due, room)
    return 1
  end
  return 0
end

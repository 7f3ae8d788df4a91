--[[
  Prepended to the scheduler's scripts (not run on its own): Redis' own clock, the
  lease fence, the turn writes a worker buffers until its next call, and letting go
  of a room. Every key a script touches is in its room's shard, so it runs on one
  Redis Cluster slot.

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

-- A history over its cap by fewer entries than this is left as it is (readers take the
-- last `cap`): one LTRIM every few turns instead of one a turn.
local HISTORY_SLACK = 16

--[[
  Applies a turn's commit (a table: session, idleSeconds, append = {json…}, historyCap,
  reset, outcome, eventId, quarantine) to the room's session and history, unless a
  commit of the same event was recorded already (a step sent again after its reply was
  lost), so the history never gets a turn twice. `session` is left out when the
  holder's session is unchanged and was written lately. Returns true when it applied
  the commit; the caller records `id`, `outcome` and `quarantine` in the turn record
  (`set`, an HSET field list).
]]
local function apply_commit(k, c, set)
  local recorded = redis.call("HMGET", k.turn, "id", "outcome")
  if recorded[1] == c.eventId and recorded[2] then return false end
  if c.reset then redis.call("DEL", k.history, k.offers) end
  if c.session then redis.call("SET", k.session, c.session, "EX", c.idleSeconds) end
  if #c.append > 0 then
    local length = redis.call("RPUSH", k.history, unpack(c.append))
    if length > c.historyCap + HISTORY_SLACK then redis.call("LTRIM", k.history, -c.historyCap, -1) end
  end
  if c.session or #c.append > 0 then redis.call("EXPIRE", k.history, c.idleSeconds) end
  set[#set + 1], set[#set + 2] = "id", c.eventId
  set[#set + 1], set[#set + 2] = "outcome", c.outcome
  if c.quarantine then set[#set + 1], set[#set + 2] = "quarantine", c.quarantine end
  return true
end

-- Parts recorded sent ({part = message ref}): into the turn record's fields (`set`),
-- their "sending" marks removed (`del`).
local function record_sent(sent, set, del)
  for part, ref in pairs(sent) do
    set[#set + 1], set[#set + 2] = "part:" .. part, ref
    del[#del + 1] = "sending:" .. part
  end
end

-- Parts whose attempt the platform refused ({part = mark}): nothing of it was sent, so
-- their "sending" mark goes back to what it was before the attempt — an earlier
-- holder's attempt whose answer is still unknown, or none ("": removed). `except` is
-- the part the same call marks anew.
local function restore_marks(not_sent, set, del, except)
  for part, mark in pairs(not_sent) do
    if part ~= except then
      if mark == "" then
        del[#del + 1] = "sending:" .. part
      else
        set[#set + 1], set[#set + 2] = "sending:" .. part, mark
      end
    end
  end
end

-- The turn record as a table (HGETALL).
local function record_of(turn)
  local flat = redis.call("HGETALL", turn)
  local record = {}
  for i = 1, #flat, 2 do record[flat[i]] = flat[i + 1] end
  return record
end

-- Lets go of a room, and puts it back in `pending` at `due` when `again` is true (nil:
-- when its inbox still has events). Returns whether the room was made pending, so the
-- caller wakes a worker.
local function release(lease, running, pending, inbox, room, due, again)
  redis.call("DEL", lease)
  redis.call("ZREM", running, room)
  if again == nil then again = redis.call("LLEN", inbox) > 0 end
  if again then redis.call("ZADD", pending, due, room) end
  return again
end

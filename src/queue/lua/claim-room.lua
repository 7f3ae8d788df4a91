--[[
  Claims one named room of a lane for a worker: the room must be pending and due,
  or held under a lease that expired (its holder died: takeover). Reads in the same
  call what its head turn needs, and counts the head turn's computations: a turn
  with no outcome yet gets `computing` incremented here, and a clean park or commit
  resets it, so a count above 1 means earlier holders died while computing it.

  KEYS[1]  the lane's pending zset (room → due, Redis ms)
  KEYS[2]  the lane's running zset (room → lease expiry, Redis ms)
  KEYS[3]  the room's lease
  KEYS[4]  the room's inbox
  KEYS[5]  the room's session
  KEYS[6]  the room's turn record
  ARGV[1]  room
  ARGV[2]  the new lease token
  ARGV[3]  lease length, ms
  ARGV[4]  how long a turn record is kept, ms

  Returns {"claimed", head event JSON, session JSON or false, turn record as a flat
  HGETALL list, 1 when taken over from an expired lease else 0, Redis ms now},
  {"later", ms until
  due}, {"held"} when a live worker holds it, or {"gone"} when it is neither pending
  nor expired (another worker has it, or its inbox is empty).
]]
local now = now_ms()
local room, token, lease_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
local running = redis.call("ZSCORE", KEYS[2], room)
if running and tonumber(running) > now then return { "held" } end
local pending = redis.call("ZSCORE", KEYS[1], room)
if not pending and not running then return { "gone" } end
if pending and not running and tonumber(pending) > now then return { "later", tonumber(pending) - now } end
local head = redis.call("LINDEX", KEYS[4], 0)
if not head then
  redis.call("ZREM", KEYS[1], room)
  redis.call("ZREM", KEYS[2], room)
  redis.call("DEL", KEYS[3])
  return { "gone" }
end
keep_lease(KEYS[3], token, lease_ms)
redis.call("ZREM", KEYS[1], room)
redis.call("ZADD", KEYS[2], now + lease_ms, room)
if redis.call("HEXISTS", KEYS[6], "outcome") == 0 then
  redis.call("HINCRBY", KEYS[6], "computing", 1)
  if redis.call("PTTL", KEYS[6]) < 0 then redis.call("PEXPIRE", KEYS[6], tonumber(ARGV[4])) end
end
return {
  "claimed",
  head,
  redis.call("GET", KEYS[5]),
  redis.call("HGETALL", KEYS[6]),
  running and 1 or 0,
  now,
}

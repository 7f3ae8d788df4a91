--[[
  Gives a room's worker slot back while its head turn waits (a send slot, a 429,
  a retry backoff, or a shutdown): applies the buffered writes, lets go of the
  lease and puts the room in `pending` at the time it may resume. A turn whose
  waiting began longer ago than the delivery deadline goes to the dead letters
  instead, and the room moves on to its next event.

  KEYS[1..11]  lease, lane running zset, session, history, offer refs, turn record,
               inbox, lane pending zset, lane wake list, dead letters hash,
               dead letters index zset
  ARGV[1]  room
  ARGV[2]  lease token
  ARGV[3]  commit JSON or ""
  ARGV[4]  sent parts JSON or ""
  ARGV[5]  the head event JSON
  ARGV[6]  ms until the room may resume
  ARGV[7]  "fail" for a failed attempt (counted), "wait" for a wait, "final" for a
           failure that no retry can fix (dead letter at once), "release" to hand
           the room back at once (shutdown: nothing about the turn changes)
  ARGV[8]  reason (logged and kept with a dead letter)
  ARGV[9]  delivery deadline, ms since the turn's first wait
  ARGV[10] dead letter id
  ARGV[11] how long the turn record is kept, ms

  Returns {0} when the lease is not the caller's, {1, ms waited so far, attempts}
  when parked, {2, ms waited so far, attempts} when dead-lettered.
]]
local now = now_ms()
local room, token = ARGV[1], ARGV[2]
if not holds(KEYS[1], KEYS[2], room, token, now) then return { 0 } end
apply_writes({ session = KEYS[3], history = KEYS[4], offers = KEYS[5], turn = KEYS[6] }, ARGV[3], ARGV[4])
if ARGV[7] == "release" then
  release(KEYS[1], KEYS[2], KEYS[8], KEYS[9], KEYS[7], room, now, false)
  return { 1, 0, 0 }
end
local turn = KEYS[6]
redis.call("HSETNX", turn, "since", now)
if ARGV[7] ~= "wait" then redis.call("HINCRBY", turn, "attempts", 1) end
redis.call("HSET", turn, "reason", ARGV[8])
redis.call("PEXPIRE", turn, tonumber(ARGV[11]))
local waited = now - tonumber(redis.call("HGET", turn, "since"))
local attempts = tonumber(redis.call("HGET", turn, "attempts") or "0")
if ARGV[7] == "final" or waited >= tonumber(ARGV[9]) then
  local record = cjson.encode({
    id = ARGV[10],
    room = room,
    event = ARGV[5],
    outcome = redis.call("HGET", turn, "outcome") or "",
    reason = ARGV[8],
    at = now,
    waitedMs = waited,
    attempts = attempts,
  })
  redis.call("HSET", KEYS[10], ARGV[10], record)
  redis.call("ZADD", KEYS[11], now, ARGV[10])
  if redis.call("LINDEX", KEYS[7], 0) == ARGV[5] then redis.call("LPOP", KEYS[7]) end
  redis.call("DEL", turn)
  release(KEYS[1], KEYS[2], KEYS[8], KEYS[9], KEYS[7], room, now, false)
  return { 2, waited, attempts }
end
release(KEYS[1], KEYS[2], KEYS[8], KEYS[9], KEYS[7], room, now + tonumber(ARGV[6]), true)
return { 1, waited, attempts }

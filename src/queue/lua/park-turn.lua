--[[
  Gives a room's worker slot back while its head turn waits (a send slot, a 429,
  a retry backoff, a restarting namespace): applies the buffered writes, lets go of
  the lease and puts the room in `pending` at the time it may resume. A turn whose
  waiting began longer ago than the delivery deadline, or whose failure no retry
  can fix, goes to the shard's dead letters instead, and the room moves on.

  KEYS[1..10]  the room's lease, the lane's running zset, the lane's pending zset,
               the room's session, history, offer refs, turn record and inbox, the
               shard's dead letters hash and its index zset
  ARGV[1]  room
  ARGV[2]  lease token
  ARGV[3]  commit JSON or ""
  ARGV[4]  sent parts JSON or ""
  ARGV[5]  a part whose send slot is booked for later (kept as `booked:<part>` for
           the next holder, whose step takes it), or ""
  ARGV[6]  the head event JSON
  ARGV[7]  ms until the room may resume
  ARGV[8]  "fail" for a failed attempt (counted), "wait" for a wait, "final" for a
           failure that no retry can fix (dead letter at once)
  ARGV[9]  reason (logged and kept with a dead letter)
  ARGV[10] delivery deadline, ms since the turn's first wait
  ARGV[11] dead letter id
  ARGV[12] how long the turn record is kept, ms
  ARGV[13] the lane (kept with a dead letter, for its re-queue)
  ARGV[14] that slot's member in the send windows

  Returns {"lost"} when the lease is not the caller's, {"parked", ms waited so far,
  attempts} when parked, {"dead", ms waited so far, attempts, 1 when the room was
  left pending for its next event else 0} when dead-lettered, {"over", 1 when the
  room was left pending else 0} when the head is no longer ARGV[6] (nothing written).
]]
local now = now_ms()
local room, token = ARGV[1], ARGV[2]
local lease, running, pending, turn, inbox = KEYS[1], KEYS[2], KEYS[3], KEYS[7], KEYS[8]
if not holds(lease, running, room, token, now) then return { "lost" } end
-- The head is no longer the parked turn's event: a finish of it was applied and its
-- answer lost (a failover). The turn is over; its buffered writes (its sent parts, its
-- attempt) must not land on the next turn's record, where a sent part would make the
-- next turn's answer look sent. The room is handed back, due now.
if redis.call("LINDEX", inbox, 0) ~= ARGV[6] then
  return { "over", release(lease, running, pending, inbox, room, now, false) }
end
apply_writes({ session = KEYS[4], history = KEYS[5], offers = KEYS[6], turn = turn }, ARGV[3], ARGV[4])
-- A clean park: the computation (if any) ended here, not in a dead process.
redis.call("HDEL", turn, "computing")
local got = redis.call("HMGET", turn, "since", "attempts")
local since = tonumber(got[1] or now)
local attempts = tonumber(got[2] or "0")
if ARGV[8] ~= "wait" then attempts = redis.call("HINCRBY", turn, "attempts", 1) end
local fields = { "reason", ARGV[9] }
if not got[1] then fields[#fields + 1], fields[#fields + 2] = "since", now end
if ARGV[5] ~= "" then fields[#fields + 1], fields[#fields + 2] = "booked:" .. ARGV[5], ARGV[14] end
redis.call("HSET", turn, unpack(fields))
redis.call("PEXPIRE", turn, tonumber(ARGV[12]))
local waited = now - since
if ARGV[8] == "final" or waited >= tonumber(ARGV[10]) then
  local record = cjson.encode({
    id = ARGV[11],
    room = room,
    lane = ARGV[13],
    event = ARGV[6],
    outcome = redis.call("HGET", turn, "outcome") or "",
    reason = ARGV[9],
    at = now,
    waitedMs = waited,
    attempts = attempts,
  })
  redis.call("HSET", KEYS[9], ARGV[11], record)
  redis.call("ZADD", KEYS[10], now, ARGV[11])
  if redis.call("LINDEX", inbox, 0) == ARGV[6] then redis.call("LPOP", inbox) end
  redis.call("DEL", turn)
  return { "dead", waited, attempts, release(lease, running, pending, inbox, room, now, false) }
end
release(lease, running, pending, inbox, room, now + tonumber(ARGV[7]), true)
return { "parked", waited, attempts }

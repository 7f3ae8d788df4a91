--[[
  park-turn: gives a room's worker slot back while its head turn waits (a send slot,
  a 429, a retry backoff, a restarting namespace): applies the buffered writes, lets
  go of the lease and puts the room in `pending` at the time it may resume. A turn
  whose waiting began longer ago than the delivery deadline, or whose failure no
  retry can fix, goes to the shard's dead letters instead, and the room moves on.

  KEYS
    lease         the room's lease
    running       the lane's running zset
    pending       the lane's pending zset
    session       the room's session
    history       the room's history
    offers        the room's offer refs
    turn          the room's turn record
    inbox         the room's inbox
    letters       the shard's dead letters hash
    letterIndex   the shard's dead letters index zset
  ARGS
    room          the room
    lane          the room's lane (kept with a dead letter, for its re-queue)
    token         the caller's lease token
    commit        the turn's commit (fence.lua), or nil
    sent          parts recorded sent since the last call, or nil
    notSent       parts whose attempt was refused since the last call ({part = mark to
                  put back, "" for none}), or nil
    booked        {part, member}: a send slot booked for a part that waits for it, kept
                  as `booked:<part>` for the next holder (whose step takes it), or nil
    head          the head event JSON
    delayMs       ms until the room may resume
    verdict       "wait" (not counted), "retry" (a failed attempt, counted) or "dead"
                  (a failure no retry can fix: dead-lettered at once)
    reason        why (logged, and kept with a dead letter)
    deadlineMs    delivery deadline, ms since the turn's first wait
    letterId      the dead letter's id, should it be one
    turnRecordMs  how long the turn record is kept, ms
  REPLY
    kind          "lost" (nothing written), "parked", "dead", or "over" when the head is
                  no longer `head` (nothing written)
    waitedMs      ms the turn has waited so far
    attempts      failed attempts so far
    leftPending   (dead, over) true when the room was left pending for its next event
]]
local now = now_ms()
if not holds(K.lease, K.running, A.room, A.token, now) then return cmsgpack.pack({ kind = "lost" }) end
-- The head is no longer the parked turn's event: a finish of it was applied and its
-- answer lost (a failover). The turn is over; its buffered writes (its sent parts, its
-- attempt) must not land on the next turn's record, where a sent part would make the
-- next turn's answer look sent. The room is handed back, due now.
if redis.call("LINDEX", K.inbox, 0) ~= A.head then
  local left = release(K.lease, K.running, K.pending, K.inbox, A.room, now, nil)
  return cmsgpack.pack({ kind = "over", leftPending = left })
end
local set, del = {}, {}
if A.commit then apply_commit(K, A.commit, set) end
if A.sent then record_sent(A.sent, set, del) end
if A.notSent then restore_marks(A.notSent, set, del, nil) end
-- A clean park: the computation (if any) ended here, not in a dead process.
del[#del + 1] = "computing"
local got = redis.call("HMGET", K.turn, "since", "attempts")
local since = tonumber(got[1] or now)
local attempts = tonumber(got[2] or "0")
if A.verdict ~= "wait" then attempts = attempts + 1 end
set[#set + 1], set[#set + 2] = "attempts", attempts
set[#set + 1], set[#set + 2] = "reason", A.reason
if not got[1] then set[#set + 1], set[#set + 2] = "since", now end
if A.booked then set[#set + 1], set[#set + 2] = "booked:" .. A.booked.part, A.booked.member end
redis.call("HSET", K.turn, unpack(set))
redis.call("HDEL", K.turn, unpack(del))
redis.call("PEXPIRE", K.turn, A.turnRecordMs)
local waited = now - since
if A.verdict == "dead" or waited >= A.deadlineMs then
  local letter = cjson.encode({
    id = A.letterId,
    room = A.room,
    lane = A.lane,
    event = A.head,
    outcome = redis.call("HGET", K.turn, "outcome") or "",
    reason = A.reason,
    at = now,
    waitedMs = waited,
    attempts = attempts,
  })
  redis.call("HSET", K.letters, A.letterId, letter)
  redis.call("ZADD", K.letterIndex, now, A.letterId)
  if redis.call("LINDEX", K.inbox, 0) == A.head then redis.call("LPOP", K.inbox) end
  redis.call("DEL", K.turn)
  local left = release(K.lease, K.running, K.pending, K.inbox, A.room, now, nil)
  return cmsgpack.pack({ kind = "dead", waitedMs = waited, attempts = attempts, leftPending = left })
end
release(K.lease, K.running, K.pending, K.inbox, A.room, now + math.max(0, math.ceil(A.delayMs)), true)
return cmsgpack.pack({ kind = "parked", waitedMs = waited, attempts = attempts })

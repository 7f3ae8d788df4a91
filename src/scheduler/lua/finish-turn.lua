--[[
  finish-turn: ends a delivered turn in one fenced call: applies the buffered commit
  (when no step carried it), stores the session again with its offer's message refs,
  links offer messages, pops the event from the inbox and drops the turn's record,
  then either lets go of the room (inbox empty, or the worker is draining) or keeps it
  and returns the next turn's event. The holder keeps the session it committed for as
  long as it holds the room (the lease fences every write), so it is not read again.
  The lease itself is kept alive by the holder's renewals. Sent again for the same
  event because its reply was lost, it writes nothing more and returns the next
  turn's record and session as they are.

  KEYS
    lease         the room's lease
    running       the lane's running zset
    pending       the lane's pending zset
    session       the room's session
    history       the room's history
    offers        the room's offer refs
    turn          the room's turn record
    inbox         the room's inbox
  ARGS
    room          the room
    token         the caller's lease token
    head          the handled event JSON (the inbox head the turn was for)
    commit        the turn's commit when no step carried it (fence.lua), or nil
    session       the session JSON to store again (offer refs added), or nil
    offerLinks    {message ref = offer id} to record, or nil
    idleSeconds   session idle expiry, seconds
    draining      true to let go even with events left
    wantHistory   true to return the history with the next turn
    historyCap    how many history entries a turn reads
    turnRecordMs  how long a turn record is kept, ms
  REPLY
    kind          "lost" (nothing written), "released" or "next"
    leftPending   (released) true when the room was left pending (wake a worker)
    head          (next) the next event JSON
    history       (next, with wantHistory) the room's history
    again         (next) true when this finish had been applied already: then
    record        the next turn's record, and
    session       its session JSON (absent when none)
    now           (next) Redis ms
]]
local now = now_ms()
if not holds(K.lease, K.running, A.room, A.token, now) then return cmsgpack.pack({ kind = "lost" }) end
-- The head is no longer the handled event: this finish was applied already and is sent
-- again because its reply was lost (a failover, too few replicas acknowledging). Nothing
-- is written twice: not the history, not the next turn's record.
local popped = redis.call("LPOP", K.inbox)
local again = popped ~= A.head
if again then
  if popped then redis.call("LPUSH", K.inbox, popped) end
else
  if A.commit then apply_commit(K, A.commit, {}) end
  if A.session then redis.call("SET", K.session, A.session, "KEEPTTL") end
  if A.offerLinks then
    for ref, offer in pairs(A.offerLinks) do redis.call("HSET", K.offers, ref, offer) end
    redis.call("EXPIRE", K.offers, A.idleSeconds)
  end
  redis.call("DEL", K.turn)
end
local head = redis.call("LINDEX", K.inbox, 0)
if not head or A.draining then
  local left = release(K.lease, K.running, K.pending, K.inbox, A.room, now, head ~= false)
  return cmsgpack.pack({ kind = "released", leftPending = left })
end
local reply = { kind = "next", head = head, again = again, now = now }
if again then
  reply.record = record_of(K.turn)
  reply.session = redis.call("GET", K.session) or nil
else
  -- The next turn has no outcome yet: it is being computed from now on (see claim.lua).
  redis.call("HINCRBY", K.turn, "computing", 1)
  redis.call("PEXPIRE", K.turn, A.turnRecordMs)
end
if A.wantHistory then reply.history = redis.call("LRANGE", K.history, -A.historyCap, -1) end
return cmsgpack.pack(reply)

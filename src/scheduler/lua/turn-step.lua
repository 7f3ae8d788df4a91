--[[
  turn-step: one fenced step of a turn, just before a send: applies the writes the
  worker buffered (the turn's commit, parts recorded sent) and marks the part about
  to be sent, only while the caller holds the room's lease. The send slot itself is
  taken beside it in the bot's own slot (reserve-slot.lua). The mark names the
  attempt's time and lease token, so a later holder can say whose attempt has no
  recorded answer; a slot booked for the part is this attempt's from here on.

  KEYS
    lease     the room's lease
    running   the lane's running zset (room → lease expiry, Redis ms)
    session   the room's session
    history   the room's history
    offers    the room's offer refs
    turn      the room's turn record
  ARGS
    room      the room
    token     the caller's lease token
    commit    the turn's commit (fence.lua), or nil
    sent      parts recorded sent since the last call ({part = message ref}), or nil
    notSent   parts whose attempt was refused since the last call ({part = mark to
              put back, "" for none}), or nil
    part      the part about to be sent, or nil
  REPLY
    kind      "stepped", or "lost" when the lease is not the caller's (nothing written)
]]
local now = now_ms()
if not holds(K.lease, K.running, A.room, A.token, now) then return cmsgpack.pack({ kind = "lost" }) end
local set, del = {}, {}
if A.commit and apply_commit(K, A.commit, set) then del[#del + 1] = "computing" end
if A.sent then record_sent(A.sent, set, del) end
if A.notSent then restore_marks(A.notSent, set, del, A.part) end
if A.part then
  set[#set + 1], set[#set + 2] = "sending:" .. A.part, now .. " " .. A.token
  del[#del + 1] = "booked:" .. A.part
end
if #set > 0 then redis.call("HSET", K.turn, unpack(set)) end
if #del > 0 then redis.call("HDEL", K.turn, unpack(del)) end
return cmsgpack.pack({ kind = "stepped" })

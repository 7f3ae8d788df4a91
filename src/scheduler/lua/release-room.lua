--[[
  release-room: hands a held room back at once (a worker shutting down, or a room
  whose next event belongs to another lane): nothing about its turn changes; the
  lease is freed and the room is pending again in the given lane when it still has
  events.

  KEYS
    lease     the room's lease
    running   the holder's lane's running zset
    pending   the pending zset of the lane the room goes back to (same shard)
    inbox     the room's inbox
  ARGS
    room      the room
    token     the caller's lease token
  REPLY
    kind      "released", or "lost" when the lease is not the caller's
    leftPending  (released) true when the room was left pending (wake a worker)
]]
local now = now_ms()
if not holds(K.lease, K.running, A.room, A.token, now) then return cmsgpack.pack({ kind = "lost" }) end
local left = release(K.lease, K.running, K.pending, K.inbox, A.room, now, nil)
return cmsgpack.pack({ kind = "released", leftPending = left })

--[[
  requeue-dead-letter: puts one dead-lettered turn back at the end of its room's
  inbox (the events that arrived after it keep their order) and makes the room
  pending.

  KEYS
    letters       the shard's dead letters hash
    letterIndex   the shard's dead letters index zset
    inbox         the room's inbox
    pending       the lane's pending zset
    running       the lane's running zset
  ARGS
    id            the dead letter's id
    room          the room
    entry         the inbox entry (the event, carrying its outcome when it had one)
  REPLY
    kind          "requeued", or "missing" when there is no such dead letter
    becamePending (requeued) true when the room became pending (wake a worker)
]]
if redis.call("HEXISTS", K.letters, A.id) == 0 then return cmsgpack.pack({ kind = "missing" }) end
redis.call("RPUSH", K.inbox, A.entry)
redis.call("HDEL", K.letters, A.id)
redis.call("ZREM", K.letterIndex, A.id)
local now = now_ms()
local held = redis.call("ZSCORE", K.running, A.room)
if held and tonumber(held) > now then return cmsgpack.pack({ kind = "requeued", becamePending = false }) end
return cmsgpack.pack({ kind = "requeued", becamePending = redis.call("ZADD", K.pending, "NX", now, A.room) == 1 })

--[[
  Puts one dead-lettered turn back at the end of its room's inbox (the events
  that arrived after it keep their order) and makes the room pending.

  KEYS[1..2]  the shard's dead letters hash and index zset
  KEYS[3..5]  the room's inbox, the lane's pending and running zsets
  ARGV[1]  dead letter id
  ARGV[2]  room
  ARGV[3]  the inbox entry (the event, carrying its outcome when it had one)

  Returns {"requeued", 1 when the room became pending (wake a worker) else 0} or
  {"missing"} when there is no such dead letter.
]]
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then return { "missing" } end
redis.call("RPUSH", KEYS[3], ARGV[3])
redis.call("HDEL", KEYS[1], ARGV[1])
redis.call("ZREM", KEYS[2], ARGV[1])
local now = now_ms()
local held = redis.call("ZSCORE", KEYS[5], ARGV[2])
if held and tonumber(held) > now then return { "requeued", 0 } end
return { "requeued", redis.call("ZADD", KEYS[4], "NX", now, ARGV[2]) }

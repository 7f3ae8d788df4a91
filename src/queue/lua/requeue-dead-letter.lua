--[[
  Puts one dead-lettered turn back at the end of its room's inbox (the events
  that arrived after it keep their order) and makes the room claimable.

  KEYS[1..2]  dead letters hash, dead letters index zset
  KEYS[3..6]  the room's inbox, lane pending zset, lane running zset, lane wake list
  ARGV[1]  dead letter id
  ARGV[2]  room
  ARGV[3]  the inbox entry (the event, carrying its outcome when it had one)

  Returns 1 when re-queued, 0 when there is no such dead letter.
]]
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call("RPUSH", KEYS[3], ARGV[3])
redis.call("HDEL", KEYS[1], ARGV[1])
redis.call("ZREM", KEYS[2], ARGV[1])
local now = now_ms()
local held = redis.call("ZSCORE", KEYS[5], ARGV[2])
if not (held and tonumber(held) > now) then
  if redis.call("ZADD", KEYS[4], "NX", now, ARGV[2]) == 1 then
    redis.call("LPUSH", KEYS[6], "1")
    redis.call("LTRIM", KEYS[6], 0, 999)
  end
end
return 1

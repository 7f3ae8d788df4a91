--[[
  Extends the leases one worker process holds in one lane of one shard, in one call.

  KEYS[1]     the lane's running zset
  KEYS[2..]   the rooms' lease keys, in the order of the pairs below
  ARGV[1]     lease length, ms
  ARGV[2], ARGV[3], …  room and lease token pairs

  Returns one 1 (renewed) or 0 (lost: another worker may have it) per room.
]]
local now = now_ms()
local lease_ms = tonumber(ARGV[1])
local out = {}
for i = 2, #KEYS do
  local room, token = ARGV[2 * i - 2], ARGV[2 * i - 1]
  if holds(KEYS[i], KEYS[1], room, token, now) then
    keep_lease(KEYS[i], token, lease_ms)
    redis.call("ZADD", KEYS[1], now + lease_ms, room)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out

--[[
  Extends every lease one worker process holds, in one call.

  KEYS[1]  the lane's running zset
  ARGV[1]  key prefix
  ARGV[2]  lease length, ms
  ARGV[3], ARGV[4], …  room and lease token pairs

  Returns one 1 (renewed) or 0 (lost: another worker may have it) per pair.
]]
local now = now_ms()
local lease_ms = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 2 do
  local room, token = ARGV[i], ARGV[i + 1]
  local lease = rkey(ARGV[1], room, "lease")
  if holds(lease, KEYS[1], room, token, now) then
    redis.call("PEXPIRE", lease, lease_ms)
    redis.call("ZADD", KEYS[1], now + lease_ms, room)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out

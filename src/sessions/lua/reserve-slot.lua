--[[
  Reserves one send slot in every given sliding window, or none.

  KEYS[i]   sorted set of one window (score = send time in ms)
  ARGV[1]   now, in ms
  ARGV[2]   unique member for this send
  ARGV[1+2i], ARGV[2+2i]  max sends and window length (ms) of KEYS[i]

  Returns 0 when the slot was taken in every window, otherwise the number of ms to
  wait before trying again (nothing is recorded then).
]]
local now = tonumber(ARGV[1])
local member = ARGV[2]
local wait = 0
for i, key in ipairs(KEYS) do
  local max = tonumber(ARGV[1 + 2 * i])
  local window = tonumber(ARGV[2 + 2 * i])
  redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window)
  if redis.call("ZCARD", key) >= max then
    local oldest = redis.call("ZRANGE", key, 0, 0, "WITHSCORES")
    local free_at = tonumber(oldest[2]) + window
    if free_at - now > wait then wait = free_at - now end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 + 2 * i])
  redis.call("ZADD", key, now, member)
  redis.call("PEXPIRE", key, window)
end
return 0

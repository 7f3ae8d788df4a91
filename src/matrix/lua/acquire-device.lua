--[[
  Takes the Matrix device's lease when nobody holds it, or extends it for its holder.

  KEYS[1]  the device's lease (a string: the holder's token)
  ARGV[1]  the caller's token
  ARGV[2]  lease length in ms

  Returns 1 when the caller holds the lease now, 0 when another process does.
]]
local holder = redis.call("GET", KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return 1

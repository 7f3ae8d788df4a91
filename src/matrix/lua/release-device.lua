--[[
  Gives the Matrix device's lease up at once (a clean shutdown), so that a standby
  process takes the device over without waiting for the lease to run out.

  KEYS[1]  the device's lease
  ARGV[1]  the caller's token

  Returns 1 when released, 0 when the caller did not hold it.
]]
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("DEL", KEYS[1])
return 1

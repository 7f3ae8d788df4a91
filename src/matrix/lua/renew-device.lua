--[[
  Extends the Matrix device's lease, only for the process that holds it: a lease that
  expired, even if nobody took it since, is not renewed (its holder must start over,
  reloading the store, since another process may have written it meanwhile).

  KEYS[1]  the device's lease
  ARGV[1]  the caller's token
  ARGV[2]  lease length in ms

  Returns 1 when renewed, 0 when the caller does not hold the lease.
]]
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("PEXPIRE", KEYS[1], ARGV[2])
return 1

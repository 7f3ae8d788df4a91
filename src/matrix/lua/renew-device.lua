--[[
  renew-device: extends the Matrix device's lease, only for the process that holds it:
  a lease that expired, even if nobody took it since, is not renewed (its holder must
  start over, reloading the store, since another process may have written it meanwhile).

  KEYS
    lease     the device's lease
  ARGS
    token     the caller's token
    leaseMs   lease length, ms
  REPLY
    held      true when renewed, false when the caller does not hold the lease
]]
if redis.call("GET", K.lease) ~= A.token then return cmsgpack.pack({ held = false }) end
redis.call("PEXPIRE", K.lease, A.leaseMs)
return cmsgpack.pack({ held = true })

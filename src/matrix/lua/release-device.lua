--[[
  release-device: gives the Matrix device's lease up at once (a clean shutdown), so that
  a standby process takes the device over without waiting for the lease to run out.

  KEYS
    lease     the device's lease
  ARGS
    token     the caller's token
  REPLY
    held      true when it was the caller's and is released, false when it did not hold it
]]
if redis.call("GET", K.lease) ~= A.token then return cmsgpack.pack({ held = false }) end
redis.call("DEL", K.lease)
return cmsgpack.pack({ held = true })

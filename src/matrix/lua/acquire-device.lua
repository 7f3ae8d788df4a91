--[[
  acquire-device: takes the Matrix device's lease when nobody holds it, or extends it
  for its holder.

  KEYS
    lease     the device's lease (a string: the holder's token)
  ARGS
    token     the caller's token
    leaseMs   lease length, ms
  REPLY
    held      true when the caller holds the lease now, false when another process does
]]
local holder = redis.call("GET", K.lease)
if holder and holder ~= A.token then return cmsgpack.pack({ held = false }) end
redis.call("SET", K.lease, A.token, "PX", A.leaseMs)
return cmsgpack.pack({ held = true })

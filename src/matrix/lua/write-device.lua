--[[
  Writes fields of the Matrix device's store (the encrypted crypto store, its
  metadata, the device's sync token), fenced by the device lease: a process that lost
  the lease can never overwrite what the new owner wrote.

  KEYS[1]  the device's lease
  KEYS[2]  the device's store (a hash)
  ARGV[1]  the caller's lease token
  ARGV[2…] field, value pairs

  Returns 1 when written, 0 when the caller does not hold the lease (nothing written).
]]
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("HSET", KEYS[2], unpack(ARGV, 2))
return 1

--[[
  Writes fields of the Matrix device's store (the encrypted parts of the crypto store,
  its metadata, the device's sync token) and removes fields it no longer has, fenced by
  the device lease: a process that lost the lease can never overwrite what the new
  owner wrote.

  KEYS[1]  the device's lease
  KEYS[2]  the device's store (a hash)
  ARGV[1]  the caller's lease token
  ARGV[2]  n, the number of fields to remove
  ARGV[3 … 2+n]  the fields to remove
  ARGV[3+n …]    field, value pairs to write

  Returns 1 when written, 0 when the caller does not hold the lease (nothing written),
  2 when written into a store that had no metadata before (new, or lost under its owner,
  who then writes every field again).
]]
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
local had = redis.call("HEXISTS", KEYS[2], "meta")
local removed = tonumber(ARGV[2])
if removed > 0 then redis.call("HDEL", KEYS[2], unpack(ARGV, 3, 2 + removed)) end
if #ARGV > 2 + removed then redis.call("HSET", KEYS[2], unpack(ARGV, 3 + removed)) end
if had == 1 then return 1 end
return 2

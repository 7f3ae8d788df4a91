--[[
  write-device: writes fields of the Matrix device's store (the encrypted parts of the
  crypto store, its metadata, the device's sync token) and removes fields it no longer
  has, fenced by the device lease: a process that lost the lease can never overwrite
  what the new owner wrote.

  KEYS
    lease     the device's lease
    store     the device's store (a hash)
  ARGS
    token     the caller's lease token
    remove    the fields to remove
    fields    the fields to write, their values in BLOBS in the same order
  BLOBS
    values    the fields' values (bytes: sealed parts of the store)
  REPLY
    result    "written"; "new" when written into a store that had no metadata before
              (new, or lost under its owner, who then writes every field again);
              "lost" when the caller does not hold the lease (nothing written)
]]
if redis.call("GET", K.lease) ~= A.token then return cmsgpack.pack({ result = "lost" }) end
local had = redis.call("HEXISTS", K.store, "meta")
if #A.remove > 0 then redis.call("HDEL", K.store, unpack(A.remove)) end
if #A.fields > 0 then
  local pairs = {}
  for i, field in ipairs(A.fields) do
    pairs[#pairs + 1], pairs[#pairs + 2] = field, BLOBS[i]
  end
  redis.call("HSET", K.store, unpack(pairs))
end
return cmsgpack.pack({ result = had == 1 and "written" or "new" })

--[[
  renew-leases: extends the leases one worker process holds in one lane of one shard,
  in one call.

  KEYS
    running   the lane's running zset
    more      then the rooms' lease keys, named in ARGS by their index in KEYS
  ARGS
    leaseMs   lease length, ms
    leases    {room, token, leaseKey}, in order
  REPLY
    renewed   per lease, in order: true when renewed, false when lost (another worker
              may have it)
]]
local now = now_ms()
local renewed = {}
for i, l in ipairs(A.leases) do
  local lease = KEYS[l.leaseKey]
  if holds(lease, K.running, l.room, l.token, now) then
    keep_lease(lease, l.token, A.leaseMs)
    redis.call("ZADD", K.running, now + A.leaseMs, l.room)
    renewed[i] = true
  else
    renewed[i] = false
  end
end
return cmsgpack.pack({ renewed = renewed })

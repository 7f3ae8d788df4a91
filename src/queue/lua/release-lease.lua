--[[
  Releases a room's lease, but only when its inbox is empty and the lease is still
  ours; an event that arrived meanwhile keeps the lease with the worker draining it.

  KEYS[1]  the room's lease
  KEYS[2]  the room's inbox list
  ARGV[1]  the lease token of the caller

  Returns 1 when released (or no longer ours), 0 when the inbox has events.
]]
if redis.call("LLEN", KEYS[2]) > 0 then
  return 0
end
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
end
return 1

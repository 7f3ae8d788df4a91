--[[
  Extends a room's lease if the caller still holds it.

  KEYS[1]  the room's lease
  ARGV[1]  the lease token of the caller
  ARGV[2]  new time to live, in ms

  Returns 1 when renewed, 0 when the lease was lost.
]]
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("PEXPIRE", KEYS[1], tonumber(ARGV[2]))
  return 1
end
return 0

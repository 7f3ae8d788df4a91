--[[
  Removes the head of a room's inbox once its turn is fully handled, only if the
  head is still that event (a retry may already have removed it).

  KEYS[1]  the room's inbox list
  ARGV[1]  the event JSON that was handled

  Returns 1 when removed, 0 otherwise.
]]
if redis.call("LINDEX", KEYS[1], 0) == ARGV[1] then
  redis.call("LPOP", KEYS[1])
  return 1
end
return 0

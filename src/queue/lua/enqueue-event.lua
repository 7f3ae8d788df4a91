--[[
  Appends an inbound event to its room's inbox unless its platform event id was
  seen before.

  KEYS[1]  de-duplication marker of the event id
  KEYS[2]  the room's inbox list
  ARGV[1]  the event, as JSON
  ARGV[2]  how long the marker is kept, in seconds

  Returns 1 when the event was appended, 0 when it was a duplicate.
]]
if redis.call("SET", KEYS[1], "1", "NX", "EX", tonumber(ARGV[2])) == false then
  return 0
end
redis.call("RPUSH", KEYS[2], ARGV[1])
return 1

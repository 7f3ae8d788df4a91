--[[
  The flood check on its own, for an event that must pass it before it can be built
  (a file is downloaded only once admitted); it is enqueued later without a check.

  KEYS[1]  the room's inbox list
  KEYS[2]  the person's turn counter (in the room's shard)
  KEYS[3]  the person's "queue full" notice key in the room
  KEYS[4]  the person's "too fast" notice key in the room
  ARGV[1]  turns a person may start per minute
  ARGV[2]  events the room may hold waiting

  Returns {"admitted"} or {"refused", kind, due} (see flood.lua).
]]
local refused = flood_refusal(KEYS[1], KEYS[2], KEYS[3], KEYS[4], tonumber(ARGV[1]), tonumber(ARGV[2]))
if refused then return { "refused", refused[1], refused[2] } end
return { "admitted" }

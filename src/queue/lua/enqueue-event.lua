--[[
  Appends an inbound event to its room's inbox unless its platform event id was
  seen in the de-duplication window, and makes the room claimable when no worker
  holds it (a held room is drained by its holder, which sees the new event before
  it lets go: `finish-turn` checks the inbox atomically).

  KEYS[1]  the room's seen-ids zset (score = Redis ms)
  KEYS[2]  the room's inbox list
  KEYS[3]  the lane's pending zset
  KEYS[4]  the lane's running zset
  KEYS[5]  the lane's wake list
  ARGV[1]  platform event id
  ARGV[2]  the event, as JSON
  ARGV[3]  de-duplication window, ms
  ARGV[4]  room
  With flood control (8 keys; see flood.lua), checked after de-duplication so that a
  redelivered event neither counts as a turn nor is refused:
  KEYS[6]  the person's turn counter
  KEYS[7]  the person's "queue full" notice key in the room
  KEYS[8]  the person's "too fast" notice key in the room
  ARGV[5]  turns a person may start per minute
  ARGV[6]  events the room may hold waiting

  Returns {"queued"}, {"duplicate"} or {"refused", kind, due} (see flood.lua).
]]
local now = now_ms()
local window = tonumber(ARGV[3])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
if redis.call("ZSCORE", KEYS[1], ARGV[1]) then return { "duplicate" } end
if #KEYS == 8 then
  local refused = flood_refusal(KEYS[2], KEYS[6], KEYS[7], KEYS[8], tonumber(ARGV[5]), tonumber(ARGV[6]))
  if refused then return { "refused", refused[1], refused[2] } end
end
redis.call("ZADD", KEYS[1], now, ARGV[1])
redis.call("PEXPIRE", KEYS[1], window)
redis.call("RPUSH", KEYS[2], ARGV[2])
local held = redis.call("ZSCORE", KEYS[4], ARGV[4])
if held and tonumber(held) > now then return { "queued" } end
-- NX: a room parked until later keeps its time; a room already pending keeps its place.
if redis.call("ZADD", KEYS[3], "NX", now, ARGV[4]) == 1 then
  redis.call("LPUSH", KEYS[5], "1")
  redis.call("LTRIM", KEYS[5], 0, 999)
end
return { "queued" }

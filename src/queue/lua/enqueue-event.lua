--[[
  Appends an inbound event to its room's inbox unless its platform event id was
  seen in the de-duplication window (and, with flood control, unless the sender is
  over a limit: see flood.lua, checked after de-duplication so that a redelivered
  event neither counts as a turn nor is refused), and makes the room pending when
  no worker holds it. A held room is drained by its holder, which sees the new
  event before it lets go (`finish-turn` checks the inbox atomically).

  KEYS[1]  the room's seen-ids zset (score = Redis ms)
  KEYS[2]  the room's inbox list
  KEYS[3]  the lane's pending zset (in the room's shard)
  KEYS[4]  the lane's running zset (in the room's shard)
  KEYS[5]  the person's turn counter (in the room's shard)
  KEYS[6]  the person's "queue full" notice key in the room
  KEYS[7]  the person's "too fast" notice key in the room
  ARGV[1]  platform event id
  ARGV[2]  the inbox entry (event JSON)
  ARGV[3]  de-duplication window, ms
  ARGV[4]  room
  ARGV[5]  "1" to apply flood control
  ARGV[6]  turns a person may start per minute
  ARGV[7]  events the room may hold waiting

  Returns {"queued", 1 when the room became pending (wake a worker) else 0},
  {"duplicate"} or {"refused", kind, 1 when the one notice is due else 0}.
]]
local now = now_ms()
local window = tonumber(ARGV[3])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
if redis.call("ZSCORE", KEYS[1], ARGV[1]) then return { "duplicate" } end
if ARGV[5] == "1" then
  local refused = flood_refusal(KEYS[2], KEYS[5], KEYS[6], KEYS[7], tonumber(ARGV[6]), tonumber(ARGV[7]))
  if refused then return { "refused", refused[1], refused[2] } end
end
redis.call("ZADD", KEYS[1], now, ARGV[1])
redis.call("PEXPIRE", KEYS[1], window)
redis.call("RPUSH", KEYS[2], ARGV[2])
local held = redis.call("ZSCORE", KEYS[4], ARGV[4])
if held and tonumber(held) > now then return { "queued", 0 } end
-- NX: a room parked until later keeps its time; a room already pending keeps its place.
return { "queued", redis.call("ZADD", KEYS[3], "NX", now, ARGV[4]) }

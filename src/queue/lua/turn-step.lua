--[[
  One fenced step of a turn, just before a send: applies the writes the worker
  buffered (the turn's commit, parts recorded sent) and marks the part about to be
  sent, only while the caller holds the room's lease. The send slot itself is taken
  beside it in the bot's own slot (src/sessions/lua/reserve-slot.lua).

  KEYS[1..6]  the room's lease, the lane's running zset, the room's session,
              history, offer refs and turn record
  ARGV[1]  room
  ARGV[2]  lease token
  ARGV[3]  commit JSON or ""
  ARGV[4]  sent parts JSON or ""
  ARGV[5]  part key about to be sent, or ""

  Returns {"stepped"}, or {"lost"} when the lease is not the caller's (nothing written).
]]
local now = now_ms()
if not holds(KEYS[1], KEYS[2], ARGV[1], ARGV[2], now) then return { "lost" } end
apply_writes({ session = KEYS[3], history = KEYS[4], offers = KEYS[5], turn = KEYS[6] }, ARGV[3], ARGV[4])
if ARGV[3] ~= "" then redis.call("HDEL", KEYS[6], "computing") end
-- The mark names the attempt's time and lease token, so a later holder can say whose
-- attempt has no recorded answer.
-- A slot booked for the part is this attempt's from here on (see park-turn.lua).
if ARGV[5] ~= "" then
  redis.call("HSET", KEYS[6], "sending:" .. ARGV[5], now .. " " .. ARGV[2])
  redis.call("HDEL", KEYS[6], "booked:" .. ARGV[5])
end
return { "stepped" }

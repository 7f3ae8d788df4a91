--[[
  Ends a delivered turn in one fenced call: applies the buffered writes, links
  offer messages, removes the event from the inbox and the turn's record, then
  either lets go of the room (inbox empty, or the worker is draining) or keeps
  the lease and returns what the next turn needs.

  KEYS[1..9]  lease, lane running zset, session, history, offer refs, turn record,
              inbox, lane pending zset, lane wake list
  ARGV[1]  room
  ARGV[2]  lease token
  ARGV[3]  commit JSON or ""
  ARGV[4]  sent parts JSON or ""
  ARGV[5]  the handled event JSON (the inbox head)
  ARGV[6]  session JSON to store again (offer refs added), or ""
  ARGV[7]  offer links JSON {messageRef: offerId} or ""
  ARGV[8]  session idle expiry, seconds
  ARGV[9]  lease length, ms
  ARGV[10] "1" when the worker is draining (let go even with events left)
  ARGV[11] "1" to return the history with the next turn

  Returns {0} when the lease is not the caller's (nothing written), {1} when the
  room was let go, {2, next event JSON, session JSON or false, turn record list,
  history list} when the caller keeps the room.
]]
local now = now_ms()
local room, token = ARGV[1], ARGV[2]
if not holds(KEYS[1], KEYS[2], room, token, now) then return { 0 } end
apply_writes({ session = KEYS[3], history = KEYS[4], offers = KEYS[5], turn = KEYS[6] }, ARGV[3], "")
if ARGV[6] ~= "" then redis.call("SET", KEYS[3], ARGV[6], "KEEPTTL") end
if ARGV[7] ~= "" then
  for ref, offer in pairs(cjson.decode(ARGV[7])) do redis.call("HSET", KEYS[5], ref, offer) end
  redis.call("EXPIRE", KEYS[5], tonumber(ARGV[8]))
end
if redis.call("LINDEX", KEYS[7], 0) == ARGV[5] then redis.call("LPOP", KEYS[7]) end
redis.call("DEL", KEYS[6])
local head = redis.call("LINDEX", KEYS[7], 0)
if not head or ARGV[10] == "1" then
  release(KEYS[1], KEYS[2], KEYS[8], KEYS[9], KEYS[7], room, now, false)
  return { 1 }
end
local lease_ms = tonumber(ARGV[9])
redis.call("SET", KEYS[1], token, "PX", lease_ms)
redis.call("ZADD", KEYS[2], now + lease_ms, room)
local history = {}
if ARGV[11] == "1" then history = redis.call("LRANGE", KEYS[4], 0, -1) end
return { 2, head, redis.call("GET", KEYS[3]), redis.call("HGETALL", KEYS[6]), history }

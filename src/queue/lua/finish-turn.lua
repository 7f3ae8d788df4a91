--[[
  Ends a delivered turn in one fenced call: applies the buffered writes, links
  offer messages, removes the event from the inbox and the turn's record, then
  either lets go of the room (inbox empty, or the worker is draining) or keeps
  the lease and returns what the next turn needs. Sent again for the same event
  because its reply was lost, it writes nothing more.

  KEYS[1..8]  the room's lease, the lane's running zset, the lane's pending zset,
              the room's session, history, offer refs, turn record and inbox
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
  ARGV[12] how long a turn record is kept, ms

  Returns {"lost"} when the lease is not the caller's (nothing written),
  {"released", 1 when the room was left pending (wake a worker) else 0}, or
  {"next", event JSON, session JSON or false, turn record list, history list, Redis
  ms now} when the caller keeps the room for its next turn.
]]
local now = now_ms()
local room, token = ARGV[1], ARGV[2]
if not holds(KEYS[1], KEYS[2], room, token, now) then return { "lost" } end
local turn, inbox = KEYS[7], KEYS[8]
-- The head is no longer the handled event: this finish was applied already and is sent
-- again because its reply was lost (a failover, too few replicas acknowledging). Nothing
-- is written twice: not the history, not the sent parts, not the next turn's record.
local again = redis.call("LINDEX", inbox, 0) ~= ARGV[5]
if not again then
  apply_writes({ session = KEYS[4], history = KEYS[5], offers = KEYS[6], turn = turn }, ARGV[3], ARGV[4])
  if ARGV[6] ~= "" then redis.call("SET", KEYS[4], ARGV[6], "KEEPTTL") end
  if ARGV[7] ~= "" then
    for ref, offer in pairs(cjson.decode(ARGV[7])) do redis.call("HSET", KEYS[6], ref, offer) end
    redis.call("EXPIRE", KEYS[6], tonumber(ARGV[8]))
  end
  redis.call("LPOP", inbox)
  redis.call("DEL", turn)
end
local head = redis.call("LINDEX", inbox, 0)
if not head or ARGV[10] == "1" then
  return { "released", release(KEYS[1], KEYS[2], KEYS[3], inbox, room, now, false) }
end
local lease_ms = tonumber(ARGV[9])
keep_lease(KEYS[1], token, lease_ms)
redis.call("ZADD", KEYS[2], now + lease_ms, room)
if not again then
  -- The next turn has no outcome yet: it is being computed from now on (see claim-room.lua).
  redis.call("HINCRBY", turn, "computing", 1)
  redis.call("PEXPIRE", turn, tonumber(ARGV[12]))
end
local history = {}
if ARGV[11] == "1" then history = redis.call("LRANGE", KEYS[5], 0, -1) end
return { "next", head, redis.call("GET", KEYS[4]), redis.call("HGETALL", turn), history, now }

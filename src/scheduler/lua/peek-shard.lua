--[[
  peek-shard: looks at one lane of one shard without changing anything: the rooms
  that are due now, the rooms whose holder's lease expired (takeover), and when the
  next room becomes due or the next lease expires. Workers call it when idle, so that
  rooms whose wake-up was lost, parked rooms and dead workers' rooms are found.

  KEYS
    pending   the lane's pending zset
    running   the lane's running zset
  ARGS
    limit     at most this many rooms of each kind
  REPLY
    due       rooms due now
    expired   rooms whose lease expired
    nextInMs  ms until the next is due or expires, absent when none
    nextRoom  that next room when it is a pending one coming due (absent otherwise): a
              worker that parked that room itself has its own timer for it
]]
local now = now_ms()
local due = redis.call("ZRANGEBYSCORE", K.pending, "-inf", now, "LIMIT", 0, A.limit)
local expired = redis.call("ZRANGEBYSCORE", K.running, "-inf", now, "LIMIT", 0, A.limit)
local reply = { due = due, expired = expired }
for i, key in ipairs({ K.pending, K.running }) do
  local first = redis.call("ZRANGEBYSCORE", key, "(" .. now, "+inf", "WITHSCORES", "LIMIT", 0, 1)
  if first[2] then
    local wait = tonumber(first[2]) - now
    if not reply.nextInMs or wait < reply.nextInMs then
      reply.nextInMs = wait
      reply.nextRoom = i == 1 and first[1] or nil
    end
  end
end
return cmsgpack.pack(reply)

--[[
  Looks at one lane of one shard without changing anything: the rooms that are due
  now, the rooms whose holder's lease expired (takeover), and when the next room
  becomes due or the next lease expires. Workers call it when idle, so that rooms
  whose wake-up was lost, parked rooms and dead workers' rooms are found.

  KEYS[1]  the lane's pending zset
  KEYS[2]  the lane's running zset
  ARGV[1]  at most this many rooms of each kind

  Returns {due rooms, expired rooms, ms until the next is due or expires, or -1,
  that next room when it is a pending one coming due (else "")}: a worker that
  parked that room itself has its own timer for it and need not look again then.
]]
local now = now_ms()
local limit = tonumber(ARGV[1])
local due = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", now, "LIMIT", 0, limit)
local expired = redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", now, "LIMIT", 0, limit)
local next_due, next_room = -1, ""
for i, key in ipairs({ KEYS[1], KEYS[2] }) do
  local first = redis.call("ZRANGEBYSCORE", key, "(" .. now, "+inf", "WITHSCORES", "LIMIT", 0, 1)
  if first[2] then
    local wait = tonumber(first[2]) - now
    if next_due < 0 or wait < next_due then
      next_due = wait
      next_room = i == 1 and first[1] or ""
    end
  end
end
return { due, expired, next_due, next_room }

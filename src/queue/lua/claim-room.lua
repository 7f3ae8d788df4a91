--[[
  Claims one room of a lane for a worker: a pending room that is due, else a
  room whose holder's lease expired (a dead worker: takeover). Reads in the same
  call what its head turn needs.

  KEYS[1]  the lane's pending zset (room → due, Redis ms)
  KEYS[2]  the lane's running zset (room → lease expiry, Redis ms)
  KEYS[3]  the lane's wake list (one entry per room made pending)
  ARGV[1]  key prefix
  ARGV[2]  the new lease token
  ARGV[3]  lease length, ms
  ARGV[4]  "1" when the caller was woken by an entry of the wake list (already
           taken); otherwise a claimed room takes its entry here, so that idle
           workers are not woken for rooms already claimed

  Returns {1, room, head event JSON, session JSON or false, turn record as a flat
  HGETALL list, 1 when another room is due now else 0} when claimed; {0, ms until
  something may be due, or -1} when nothing is; {2} when a candidate turned out
  empty or held (call again).
]]
local now = now_ms()
local prefix, token, lease_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])
local room
local due = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", now, "LIMIT", 0, 1)
if due[1] then
  room = due[1]
  redis.call("ZREM", KEYS[1], room)
else
  local expired = redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", now, "LIMIT", 0, 1)
  if expired[1] then
    room = expired[1]
    redis.call("ZREM", KEYS[2], room)
  end
end
if not room then
  local next_due = -1
  for _, key in ipairs({ KEYS[1], KEYS[2] }) do
    local first = redis.call("ZRANGE", key, 0, 0, "WITHSCORES")
    if first[2] then
      local wait = math.max(0, tonumber(first[2]) - now)
      if next_due < 0 or wait < next_due then next_due = wait end
    end
  end
  return { 0, next_due }
end
local held = redis.call("ZSCORE", KEYS[2], room)
-- Held by a live worker: it drains the inbox before letting go.
if held and tonumber(held) > now then return { 2 } end
local inbox = rkey(prefix, room, "inbox")
local head = redis.call("LINDEX", inbox, 0)
if not head then
  redis.call("DEL", rkey(prefix, room, "lease"))
  return { 2 }
end
redis.call("SET", rkey(prefix, room, "lease"), token, "PX", lease_ms)
redis.call("ZADD", KEYS[2], now + lease_ms, room)
if ARGV[4] ~= "1" then redis.call("LPOP", KEYS[3]) end
local more = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", now, "LIMIT", 0, 1)[1] and 1 or 0
return {
  1,
  room,
  head,
  redis.call("GET", rkey(prefix, room, "session")),
  redis.call("HGETALL", rkey(prefix, room, "turn")),
  more,
}

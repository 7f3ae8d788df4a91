--[[
  group-mirror: a group chat's send through the bot's own windows (reserve-slot.lua),
  written again in the group's window among the shard's fallback windows
  (fallback-slot.lua), in its room's shard: when the Cluster range holding the bot's
  windows goes down, the fallback then knows the group's minute and need not wait it
  out (src/scheduler/group-mirror.ts). Entries are what windows.lua makes of them.

  KEYS
    since     from when (the shard's ms) every such send is written here (set by "since"
              only: a copy that set it would make the shard's groups wait out a minute
              whenever it landed before the process's "since"); "start": the
              same for the whole bot, in its windows' slot, decided once for every process
    window    the group's window among the shard's fallback windows (zset); "start":
              the bot's windows' state
  ARGS
    member    the send's member
    mode      "sent": its slot is `ms` from now; "answered": its request was answered
              now; "hold": a 429 blocks the group for `ms`; "past": a send made without
              a slot was answered `ms` ago; "start": decide the bot's `since` when not
              yet decided (`sinceMs` ago when its windows have no state, else now);
              "since": set the shard's `since` to `ms` when not yet set
    ms        see `mode`
    windowMs  the group window's length
    sinceMs   "start": how long ago `since` is when the bot's windows have no state
  REPLY
    since     "start": the bot's `since` (else 0)
]]
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if A.mode == "start" then
  local fresh = redis.call("EXISTS", K.window) == 0
  redis.call("SET", K.since, fresh and now - A.sinceMs or now, "NX")
  return cmsgpack.pack({ since = tonumber(redis.call("GET", K.since)) })
end
if A.mode == "since" then
  redis.call("SET", K.since, A.ms, "NX")
  return cmsgpack.pack({ since = 0 })
end
-- Kept while its latest entry and any hold still count, as windows.lua keeps a window.
local function keep(until_)
  local ms = until_ - now + A.windowMs + 1000
  if redis.call("PTTL", K.window) < ms then redis.call("PEXPIRE", K.window, ms) end
end
if A.mode == "sent" or (A.mode == "past" and A.ms < A.windowMs) then
  local at = A.mode == "sent" and now + A.ms or now - A.ms
  redis.call("ZADD", K.window, at, A.member)
  keep(at)
elseif A.mode == "answered" then
  redis.call("ZADD", K.window, "XX", "GT", now, A.member)
  keep(now)
elseif A.mode == "hold" then
  local old = redis.call("ZSCORE", K.window, "hold")
  if not old or tonumber(old) < now + A.ms then redis.call("ZADD", K.window, now + A.ms, "hold") end
  keep(now + A.ms)
end
return cmsgpack.pack({ since = 0 })

--[[
  fallback-check: run on every shard by the caller the bot's own windows asked to
  check after a gap (reserve-slot.lua): marks that those windows answer again, so that
  the shard refuses fallback slots from now on (fallback-slot.lua), and returns how
  long ago its latest fallback slot was, for the bot's window to wait out, and how
  long each group's latest fallback send still counts, for that group to wait out.

  KEYS
    back      the shard's mark that the bot's own windows answered again
    last      the shard's latest fallback slot time
    groups    per group scope, when its latest fallback send stops counting (zset)
  ARGS
    backMs    how long the mark refuses fallback slots
  REPLY
    kept      whether the shard keeps a fallback slot time (one of the last 10 s)
    agoMs     ms since that slot (its answer; negative for a slot still ahead)
    groups    {scope, ms}: each group whose fallback sends still count, ms until they stop
]]
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("SET", K.back, now, "PX", A.backMs)
redis.call("ZREMRANGEBYSCORE", K.groups, "-inf", now)
local flat = redis.call("ZRANGE", K.groups, 0, -1, "WITHSCORES")
local groups = {}
for i = 1, #flat, 2 do
  groups[#groups + 1] = { scope = flat[i], ms = tonumber(flat[i + 1]) - now }
end
local last = redis.call("GET", K.last)
if not last then return cmsgpack.pack({ kept = false, agoMs = 0, groups = groups }) end
return cmsgpack.pack({ kept = true, agoMs = now - tonumber(last), groups = groups })

--[[
  fallback-check: run on every shard by the caller the bot's own windows asked to
  check after a gap (reserve-slot.lua): marks that those windows answer again, so that
  the shard refuses fallback slots from now on (fallback-slot.lua), and returns how
  long ago its latest fallback slot was, for the bot's window to wait out, and each
  group's fallback sends that still count, for that group's window there.

  KEYS
    back      the shard's mark that the bot's own windows answered again
    last      the shard's latest fallback slot time
    groups    per group scope, when its latest fallback send stops counting (zset)
    sent      the fallback's group sends, "<scope>|<member>" at their time (zset)
  ARGS
    backMs    how long the mark refuses fallback slots
  REPLY
    kept      whether the shard keeps a fallback slot time (one of the last 10 s)
    agoMs     ms since that slot (its answer; negative for a slot still ahead)
    groups    {scope, ms}: each group whose fallback sends still count, ms until they stop
    sends     {scope, member, agoMs}: those groups' fallback sends, ms since each
]]
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("SET", K.back, now, "PX", A.backMs)
redis.call("ZREMRANGEBYSCORE", K.groups, "-inf", now)
local flat = redis.call("ZRANGE", K.groups, 0, -1, "WITHSCORES")
local groups, counting = {}, {}
for i = 1, #flat, 2 do
  groups[#groups + 1] = { scope = flat[i], ms = tonumber(flat[i + 1]) - now }
  counting[flat[i]] = true
end
local sends = {}
local sent = redis.call("ZRANGE", K.sent, 0, -1, "WITHSCORES")
for i = 1, #sent, 2 do
  local bar = string.find(sent[i], "|", 1, true)
  local scope = string.sub(sent[i], 1, bar - 1)
  if counting[scope] then
    sends[#sends + 1] = { scope = scope, member = string.sub(sent[i], bar + 1), agoMs = now - tonumber(sent[i + 1]) }
  end
end
local last = redis.call("GET", K.last)
if not last then return cmsgpack.pack({ kept = false, agoMs = 0, groups = groups, sends = sends }) end
return cmsgpack.pack({ kept = true, agoMs = now - tonumber(last), groups = groups, sends = sends })

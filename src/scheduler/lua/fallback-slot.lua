--[[
  fallback-slot: takes one send slot in a shard's fallback windows, used while the
  bot's own windows (reserve-slot.lua) are out of reach (src/scheduler/window-fallback.ts):
  the bot's share of the shards (its limit divided by their number) and the chat's
  window, in the shard's slot. Nothing is booked for later: a slot further off than
  `soon` is answered with its wait and the sender asks again then. Refused to a
  sender whose calls to the bot's own windows have failed since before the shard's
  `back` mark (a check after a gap, fallback-check.lua, saw the bot's windows answer
  then): that check saw every fallback slot taken before it, and none of that
  failure's is taken after it. A sender failing only since (a later outage) may take
  one: the bot's windows were unreachable all that time, and the first call there
  after it makes someone check again.

  A group's send (its 20 a minute) also records, in the shard's `groups`, when that
  send stops counting in its group's window, and in `sent` the send itself (its group
  scope and member, at its slot, then its answer): once the bot's windows answer
  again, those sends are put into the group's window there (fallback-check.lua,
  reserve-slot.lua), which does not have them.

  A group's window here also holds its sends through the bot's own windows
  (group-mirror.lua) from the shard's `mirrored` mark on. Before the mark is `enterMs`
  old, those sends may be missing, and a group's send waits until the sender has
  probed the bot's windows without an answer that long: every send they let through
  has then left the group's window.

  KEYS
    back      the shard's mark that the bot's own windows answered again
    last      the shard's latest fallback slot time
    groups    per group scope, when its latest fallback send stops counting (zset)
    sent      the fallback's group sends, "<scope>|<member>" at their time (zset)
    mirrored  from when every group's send through the bot's windows is in its window here
    more      the fallback windows' zsets, named in ARGS by their index in KEYS
  ARGS
    windows   {windowKey, max (sends), windowMs}, in order
    member    the send's member
    mode      "take": now or within `ms`, else the wait (nothing recorded);
              "answered": the member's request was answered now; "hold": block the windows
    ms        "take": the `soon` ms; "hold": ms to block the windows for
    failingForMs  "take": how long the sender's calls to the bot's windows have failed
    group     the group window's scope when the send is to a group, else ""
    groupMs   that window's length
    enterMs   "take" to a group: how old `mirrored` must be, or else the probing
    probingForMs  "take": how long the sender has probed the bot's windows without an answer
  REPLY
    waitMs    0 when the slot was taken now, else the ms until it ("take")
    tight     true when a window is at least half full
    refused   true when the bot's own windows answered lately: ask them instead
]]
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keys, max, window = windows_of(A.windows)
-- The last fallback slot is kept as long as a check after a gap needs it: its sends
-- count for the bot's window and a chat's (a second and a little) past it.
local LAST_KEPT_MS = 10000
-- A group's send at `at`, and when it stops counting, kept as long as it counts.
local function group_until(at)
  if A.group == "" then return end
  redis.call("ZREMRANGEBYSCORE", K.groups, "-inf", now)
  redis.call("ZADD", K.groups, "GT", at + A.groupMs, A.group)
  redis.call("ZREMRANGEBYSCORE", K.sent, "-inf", now - A.groupMs)
  redis.call("ZADD", K.sent, "GT", at, A.group .. "|" .. A.member)
  local keep = at + A.groupMs - now + LAST_KEPT_MS
  for _, key in ipairs({ K.groups, K.sent }) do
    if redis.call("PTTL", key) < keep then redis.call("PEXPIRE", key, keep) end
  end
end
if A.mode == "hold" then
  windows_hold(keys, window, A.ms, now)
  return cmsgpack.pack({ waitMs = 0, tight = false, refused = false })
end
if A.mode == "answered" then
  windows_answered(keys, A.member, now)
  redis.call("SET", K.last, now, "PX", LAST_KEPT_MS)
  group_until(now)
  return cmsgpack.pack({ waitMs = 0, tight = false, refused = false })
end
local back = tonumber(redis.call("GET", K.back) or "-1")
if back >= 0 and now - A.failingForMs <= back then
  return cmsgpack.pack({ waitMs = 0, tight = false, refused = true })
end
if A.group ~= "" then
  local mirrored = tonumber(redis.call("GET", K.mirrored) or "-1")
  if (mirrored < 0 or now - mirrored < A.enterMs) and A.probingForMs < A.enterMs then
    return cmsgpack.pack({ waitMs = A.enterMs - A.probingForMs, tight = false, refused = false })
  end
end
local from, tight, crowded = windows_read(keys, max, window, now, A.member, true)
local at = windows_earliest(crowded, from, math.huge, 0)
if at > now + math.min(A.ms, 100) then return cmsgpack.pack({ waitMs = at - now, tight = tight, refused = false }) end
windows_take(keys, window, A.member, at, now, from)
local last = tonumber(redis.call("GET", K.last) or "0")
redis.call("SET", K.last, math.max(last, at), "PX", LAST_KEPT_MS)
group_until(at)
return cmsgpack.pack({ waitMs = at - now, tight = tight, refused = false })

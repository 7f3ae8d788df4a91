--[[
  reserve-slot: takes or books one send slot in every given window (sends outside a
  turn and a turn's sends alike, right after the turn's fenced step), records a 429's
  hold, or records that a send's request was answered.

  A slot taken for now or for at most `soon` ms ahead (100 at most) is one the sender
  leaves in without asking again, so it must fit every entry due within 100 ms, as
  they stand: each of those senders did the same, and so no window ever counts more
  than its limit, whatever the order the requests left in (entries count from their
  departure until answered, then from the answer). A slot further ahead is a booking:
  a plan that later senders queue behind; when it comes, its sender asks again with
  the same member and leaves if the entries then due allow (a late neighbour may
  shift it a little, never to the back of the queue).

  With `gate` (a Cluster, where sends may book in the shards' fallback windows while
  this slot is out of reach: src/scheduler/window-fallback.ts), a call that comes after
  a gap of more than GAP_MS since the last one (the slot idle, or down) takes nothing
  until some caller has checked the shards for fallback sends ("checked"), which also
  blocks the first window (the bot's) until those sends no longer count, puts each
  group's fallback sends into its window given after it (`imports`), and, for
  each shard that could not say which groups sent (`shardsHeld`), the sends to groups
  whose room is in it (`groupShard`) for `groupMs`: such a send takes nothing until
  its caller has checked that shard alone ("rechecked", which lifts the hold), unless
  it accepts the hold (`blanketOk`).

  KEYS
    first     the first window's zset (every window is in its slot)
    state     the windows' last call time and pending check (`gate`)
    more      then the other windows' zsets, named in ARGS by their index in KEYS
  ARGS
    windows   {windowKey, max (sends), windowMs}, in order
    member    the send's member (unique per attempt; a booked attempt keeps its own)
    mode      "take": now or not at all; "book": now, soon, or booked for later (a new
              member); "booked": the same for a member that may hold a booking;
              "answered": the member's request was answered now; "hold": block the windows;
              "past": a send made without a slot (Redis refusing writes then) is recorded
              at when it was answered, `ms` ago, so that it counts as long as any send;
              "checked": the shards were checked after a gap (`startedAt`), block the
              first window `ms`; "rechecked": one shard held for its groups was checked
              (`startedAt`), the same; "release": drop the member's slot (its send went
              through the fallback windows instead)
    ms        "hold", "checked", "rechecked": ms to block the (first) windows for; "book", "booked": the
              `soon` ms; "past": how long ago the send was answered
    gate      whether a gap makes the windows wait for a check
    startedAt "checked", "rechecked": the `at` of the reply that asked for the check
    imports   "checked", "rechecked": per window after the first (a group's), its fallback
              sends {member, agoMs} and how long the window is kept (keepMs)
    groupMs   "checked": ms to hold the groups of each of `shardsHeld` for
    shardsHeld  "checked": the shards that did not answer the check
    shardsReached  "checked", "rechecked": shards that answered: their groups' hold is lifted
    groupShard  the send is to a group whose room is in this shard (`gate`)
    blanketOk the send accepts its group's shard's hold (waits it out) instead of asking for a check
  REPLY
    waitMs    0 when the slot was taken now, else the ms until the slot ("book": taken
              or booked for then; "take": nothing recorded); 0 for "hold", "answered"
    tight     true when a window is at least half full, so that the caller should
              report the answer ("answered")
    unchecked true when nothing was taken because the shards must be checked first
    at        Redis' time of this call
    idleMs    with `unchecked`: how long the windows had no call before the gap (-1: unknown)
    shard     with `unchecked`: the group's shard to check alone (its groups are held)
]]
local PLAN_MARGIN_MS = 10
-- How far ahead a booking that has come looks: no sender waits longer than this for a
-- slot it took (`soon` is at most this), so every such slot is seen by the others.
local SEEN_AHEAD_MS = 100
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Longer than this without a call, the slot may have been out of reach while others
-- sent through the shards' fallback windows, which are entered only after 3 s of it.
local GAP_MS = 2000
local keys, max, window = windows_of(A.windows)
local member, mode = A.member, A.mode
local pending = false
local groupsFrom = 0
if A.gate then
  local seen = tonumber(redis.call("HGET", K.state, "at") or "-1")
  pending = redis.call("HEXISTS", K.state, "pending") == 1
  if mode == "checked" or mode == "rechecked" then
    -- A check that began within GAP_MS saw every fallback send that the shards let
    -- through before it; each later one was refused there (fallback-check.lua).
    if (pending or mode == "rechecked") and now - A.startedAt <= GAP_MS then
      if A.ms > 0 then windows_hold({ keys[1] }, { window[1] }, A.ms, now) end
      for i = 2, #keys do
        local import = A.imports[i - 1]
        -- Under a name of its own: the same member's slot here, left by a call that ran
        -- once the range was back, is released ("release") without taking this send along.
        for _, send in ipairs(import.sends) do
          redis.call("ZADD", keys[i], "GT", now - send.agoMs, "fallback:" .. send.member)
        end
        if redis.call("PTTL", keys[i]) < import.keepMs then redis.call("PEXPIRE", keys[i], import.keepMs) end
      end
      for _, shard in ipairs(A.shardsReached or {}) do redis.call("HDEL", K.state, "groups:" .. shard) end
      for _, shard in ipairs(A.shardsHeld or {}) do
        local field = "groups:" .. shard
        local held = tonumber(redis.call("HGET", K.state, field) or "0")
        if now + A.groupMs > held then redis.call("HSET", K.state, field, now + A.groupMs) end
      end
      if mode == "checked" then
        redis.call("HDEL", K.state, "pending")
        pending = false
      end
    end
  elseif seen < 0 or now - seen > GAP_MS then
    redis.call("HSET", K.state, "pending", now, "idle", seen < 0 and -1 or now - seen)
    pending = true
  end
  if A.groupShard then groupsFrom = tonumber(redis.call("HGET", K.state, "groups:" .. A.groupShard) or "0") end
  redis.call("HSET", K.state, "at", now)
  redis.call("PEXPIRE", K.state, 86400000)
end
local function unchecked_reply()
  local idle = tonumber(redis.call("HGET", K.state, "idle") or "-1")
  return cmsgpack.pack({ waitMs = 0, tight = false, unchecked = true, at = now, idleMs = idle })
end
if mode == "checked" then
  if pending then return unchecked_reply() end
  return cmsgpack.pack({ waitMs = 0, tight = false, unchecked = false, at = now })
end
if mode == "rechecked" then return cmsgpack.pack({ waitMs = 0, tight = false, unchecked = false, at = now }) end
if mode == "hold" then
  windows_hold(keys, window, A.ms, now)
  return cmsgpack.pack({ waitMs = 0, tight = false, at = now })
end
if mode == "release" then
  for _, key in ipairs(keys) do redis.call("ZREM", key, member) end
  return cmsgpack.pack({ waitMs = 0, tight = false, at = now })
end
if mode == "answered" then
  windows_answered(keys, member, now)
  return cmsgpack.pack({ waitMs = 0, tight = false, at = now })
end
if mode == "past" then
  local at = now - A.ms
  for i, key in ipairs(keys) do
    if at > now - window[i] then
      redis.call("ZADD", key, at, member)
      local keep = at - now + window[i] + 1000
      if redis.call("PTTL", key) < keep then redis.call("PEXPIRE", key, keep) end
    end
  end
  return cmsgpack.pack({ waitMs = 0, tight = false, at = now })
end
if pending then return unchecked_reply() end
-- A group whose shard did not answer a check: that shard is asked alone first, or the hold waited out.
if groupsFrom > now and not A.blanketOk then
  return cmsgpack.pack({ waitMs = 0, tight = false, unchecked = true, at = now, idleMs = -1, shard = A.groupShard })
end
local soon = mode == "take" and 0 or math.min(A.ms, SEEN_AHEAD_MS)
local own = mode == "booked" and tonumber(redis.call("ZSCORE", keys[1], member) or "-1") or -1
-- Asked before its booking comes (a claim ahead of time): the booking stands.
if own > now + soon then return cmsgpack.pack({ waitMs = own - now, tight = false, at = now }) end
local from, tight, crowded = windows_read(keys, max, window, now, member, own >= 0)
-- After the bot's windows were out of reach: a group waits for the fallback's group sends.
if groupsFrom > from then from = groupsFrom end
-- A booking that has come counts only what leaves by then; a new sender, every booking.
local upto = own >= 0 and now + SEEN_AHEAD_MS or math.huge
local at = windows_earliest(crowded, from, upto, 0)
if mode == "take" and at > now then return cmsgpack.pack({ waitMs = at - now, tight = tight, at = now }) end
-- A booking for later is planned with each window 10 ms longer: a booked send's entry
-- moves later by its answer's delay, and a plan short of that makes the booking shift
-- when it comes (another park and claim), where a plan a little long costs nothing
-- (its sender, asking ahead of time, leaves as early as the windows allow).
if own < 0 and at > now + soon then at = windows_earliest(crowded, from, upto, PLAN_MARGIN_MS) end
windows_take(keys, window, member, at, now, from)
return cmsgpack.pack({ waitMs = at - now, tight = tight, at = now })

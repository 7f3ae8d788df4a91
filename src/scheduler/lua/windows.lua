--[[
  Prepended to the scripts that take send slots (not run on its own): sliding
  windows kept as zsets of send times on Redis' own clock. An entry's score is when
  its send may leave at the earliest (a slot booked for later is an entry in the
  future) until the sender reports its request answered; then it is moved to that
  moment, when the request had certainly arrived. The member "hold", when present,
  blocks the window until its score (a platform's 429 retry_after).
]]

-- The window's entries as sorted numbers, without "hold" and `member`.
local function window_entries(key, now, window, member)
  local flat = redis.call("ZRANGEBYSCORE", key, now - window, "+inf", "WITHSCORES")
  local entries = {}
  for i = 1, #flat, 2 do
    if flat[i] ~= "hold" and flat[i] ~= member then entries[#entries + 1] = tonumber(flat[i + 1]) end
  end
  return entries
end

-- True when one more send at `x` keeps every `window`-long span of `entries` (sorted)
-- at `max` sends or fewer: no run of max + 1 sends, x among them, spans less than it.
local function fits(entries, max, window, x)
  local n = #entries
  local k = 0
  while k < n and entries[k + 1] < x do k = k + 1 end
  for j = math.max(1, k - max + 1), math.min(k + 1, n - max + 1) do
    local first = j <= k and entries[j] or x
    local last = (j + max - 1 >= k + 1) and entries[j + max - 1] or x
    if last - first < window then return false end
  end
  return true
end

-- Reads every window (keys[i] with max[i], window[i]) leaving `member`'s own entry out:
-- drops what can no longer count, and returns the earliest time a hold allows, whether
-- any window is at least half full (then the send's answer time is worth recording),
-- and the windows that hold `max` others or more with their entries (the others have
-- room at any time).
local function windows_read(keys, max, window, now, member, booked)
  local from, tight, crowded = now, false, {}
  for i, key in ipairs(keys) do
    redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window[i])
    local hold = tonumber(redis.call("ZSCORE", key, "hold") or "0")
    local count = redis.call("ZCARD", key)
    if hold > 0 then count = count - 1 end
    if booked and redis.call("ZSCORE", key, member) then count = count - 1 end
    if hold > from then from = hold end
    if 2 * (count + 1) >= max[i] then tight = true end
    if count >= max[i] then
      crowded[#crowded + 1] =
        { entries = window_entries(key, now, window[i], member), max = max[i], window = window[i] }
    end
  end
  return from, tight, crowded
end

-- The earliest time from `from` on at which one more send fits every crowded window,
-- counting only the entries due by `upto`, each window `margin` ms longer than it is.
-- A send fits again only once some entry is a window behind it: those are the candidates.
local function windows_earliest(crowded, from, upto, margin)
  local lists, candidates = {}, { from }
  for i, c in ipairs(crowded) do
    local list = {}
    for _, e in ipairs(c.entries) do
      if e <= upto then
        list[#list + 1] = e
        if e + c.window + margin > from then candidates[#candidates + 1] = e + c.window + margin end
      end
    end
    lists[i] = list
  end
  table.sort(candidates)
  for _, x in ipairs(candidates) do
    local ok = true
    for i, c in ipairs(crowded) do
      if not fits(lists[i], c.max, c.window + margin, x) then
        ok = false
        break
      end
    end
    if ok then return x end
  end
  return candidates[#candidates]
end

-- Records `member`'s send at `at` in every window, keeping each window while this send,
-- its answer (a second later at most) and every hold (`from` is past them) still count.
-- A booking further ahead that was made earlier may go with the window; its sender then
-- asks afresh.
local function windows_take(keys, window, member, at, now, from)
  for i, key in ipairs(keys) do
    redis.call("ZADD", key, at, member)
    redis.call("PEXPIRE", key, math.max(at, from) - now + window[i] + 1000)
  end
end

-- Moves `member`'s entries to now: its request was answered, so it had arrived by then.
local function windows_answered(keys, member, now)
  for _, key in ipairs(keys) do
    redis.call("ZADD", key, "XX", "GT", now, member)
  end
end

-- Blocks every window until now + ms.
local function windows_hold(keys, window, ms, now)
  for i, key in ipairs(keys) do
    local old = redis.call("ZSCORE", key, "hold")
    if not old or tonumber(old) < now + ms then redis.call("ZADD", key, now + ms, "hold") end
    local keep = redis.call("PTTL", key)
    if keep < ms + window[i] then redis.call("PEXPIRE", key, ms + window[i]) end
  end
end

-- The windows of a call ({windowKey (index in KEYS), max, windowMs}, in order) as three lists.
local function windows_of(list)
  local keys, max, window = {}, {}, {}
  for i, w in ipairs(list) do
    keys[i], max[i], window[i] = KEYS[w.windowKey], w.max, w.windowMs
  end
  return keys, max, window
end

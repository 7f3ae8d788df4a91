--[[
  Prepended to the scripts that take send slots (not run on its own): sliding
  windows kept as zsets of send times on Redis' own clock. The member "hold", when
  present, blocks the window until its score (a platform's 429 retry_after).
]]

-- ms until every window has room (0 = now). keys[i] pairs with max[i], window[i].
local function windows_wait(keys, max, window, now)
  local wait = 0
  for i, key in ipairs(keys) do
    redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window[i])
    local count = redis.call("ZCARD", key)
    local hold = redis.call("ZSCORE", key, "hold")
    if hold then
      count = count - 1
      local h = tonumber(hold)
      if h - now > wait then wait = h - now end
    end
    if count >= max[i] then
      local oldest = redis.call("ZRANGE", key, 0, 1, "WITHSCORES")
      local at = oldest[1] == "hold" and oldest[4] or oldest[2]
      local free_at = tonumber(at) + window[i]
      if free_at - now > wait then wait = free_at - now end
    end
  end
  return wait
end

-- Records one send (unique member) in every window.
local function windows_take(keys, window, member, now)
  for i, key in ipairs(keys) do
    redis.call("ZADD", key, now, member)
    local keep = window[i]
    local hold = redis.call("ZSCORE", key, "hold")
    if hold then keep = math.max(keep, tonumber(hold) - now + window[i]) end
    redis.call("PEXPIRE", key, keep)
  end
end

-- Blocks every window until now + ms.
local function windows_hold(keys, window, ms, now)
  for i, key in ipairs(keys) do
    local old = redis.call("ZSCORE", key, "hold")
    if not old or tonumber(old) < now + ms then redis.call("ZADD", key, now + ms, "hold") end
    redis.call("PEXPIRE", key, ms + window[i])
  end
end

-- Splits KEYS from `first` on and their (max, window) pairs in ARGV from `argv_first` on.
local function windows_args(first, argv_first)
  local keys, max, window = {}, {}, {}
  for i = first, #KEYS do
    local j = argv_first + 2 * (i - first)
    keys[#keys + 1] = KEYS[i]
    max[#max + 1] = tonumber(ARGV[j])
    window[#window + 1] = tonumber(ARGV[j + 1])
  end
  return keys, max, window
end

--[[
  Prepended to the scripts that admit inbound events (not run on its own): inbound
  flood control, by Redis' own clock. A room may hold `cap` waiting events and a
  person may start `per_minute` turns in a minute (a counter that expires 60 s after
  its first turn). The excess is refused; each kind of refusal claims a notice key
  that lives 60 s, so the person is told once.

  Returns nil when admitted (the person's turn is counted), else {kind, due}: kind is
  "queue" or "rate", due is 1 when the one notice must be sent now.
]]
local FLOOD_WINDOW_S = 60

local function flood_refusal(inbox, counter, notice_queue, notice_rate, per_minute, cap)
  local kind
  if redis.call("LLEN", inbox) >= cap then
    kind = "queue"
  else
    local n = redis.call("INCR", counter)
    if n == 1 then redis.call("EXPIRE", counter, FLOOD_WINDOW_S) end
    if n <= per_minute then return nil end
    kind = "rate"
  end
  local notice = kind == "queue" and notice_queue or notice_rate
  local due = redis.call("SET", notice, "1", "EX", FLOOD_WINDOW_S, "NX") and 1 or 0
  return { kind, due }
end

--[[
  Prepended to the scripts that admit inbound events (not run on its own): inbound
  flood control, by Redis' own clock. A room may hold `cap` waiting events and a
  person may start `perMinute` turns in a minute (a counter that expires 60 s after
  its first turn). The excess is refused; each kind of refusal claims a notice key
  that lives 60 s, so the person is told once.

  f = {counter, noticeQueue, noticeRate, perMinute, cap}; `length` is the inbox's
  length with the event counted, or nil to read it. Returns nil when admitted (the
  person's turn is counted), else {kind = "refused", limit = "queue" | "rate",
  noticeDue = true when the one notice must be sent now}.
]]
local FLOOD_WINDOW_S = 60

local function flood_refusal(f, inbox, length)
  local limit
  if (length or redis.call("LLEN", inbox) + 1) > f.cap then
    limit = "queue"
  else
    local n = redis.call("INCR", f.counter)
    if n == 1 then redis.call("EXPIRE", f.counter, FLOOD_WINDOW_S) end
    if n <= f.perMinute then return nil end
    limit = "rate"
  end
  local notice = limit == "queue" and f.noticeQueue or f.noticeRate
  local due = redis.call("SET", notice, "1", "EX", FLOOD_WINDOW_S, "NX") and true or false
  return { kind = "refused", limit = limit, noticeDue = due }
end

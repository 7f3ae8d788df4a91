--[[
  Reserves one send slot in every given window, or none (sends outside a turn;
  a turn's sends go through queue/lua/turn-step.lua, which also checks the lease).

  KEYS[i]   one window's zset
  ARGV[1]   unique member for this send
  ARGV[2]   "take" or "hold"
  ARGV[3]   for "hold": ms to block the windows for
  ARGV[2+2i], ARGV[3+2i]  max sends and window length (ms) of KEYS[i]

  Returns 0 when the slot was taken in every window (or the hold recorded),
  otherwise the ms to wait before trying again (nothing recorded then).
]]
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keys, max, window = windows_args(1, 4)
if ARGV[2] == "hold" then
  windows_hold(keys, window, tonumber(ARGV[3]), now)
  return 0
end
local wait = windows_wait(keys, max, window, now)
if wait > 0 then return wait end
windows_take(keys, window, ARGV[1], now)
return 0

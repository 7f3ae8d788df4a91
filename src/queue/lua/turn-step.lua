--[[
  One fenced step of a turn: applies the writes the worker buffered (the turn's
  commit, parts recorded sent), then — when windows are given — takes one send
  slot in every window on Redis' clock and marks the part about to be sent.

  KEYS[1..6]  lease, lane running zset, session, history, offer refs, turn record
  KEYS[7..]   rate windows (see sessions/lua/windows.lua)
  ARGV[1]  room
  ARGV[2]  lease token
  ARGV[3]  commit JSON or ""
  ARGV[4]  sent parts JSON or ""
  ARGV[5]  part key about to be sent, or ""
  ARGV[6]  unique member for this send
  ARGV[7..]  max sends and window length (ms) of each rate window, in KEYS order

  Returns {1} when done (slot taken, part marked), {0} when the lease is not the
  caller's (nothing written), {2, ms} when a window is full or held: writes
  applied, no slot taken, try again after ms.
]]
local now = now_ms()
if not holds(KEYS[1], KEYS[2], ARGV[1], ARGV[2], now) then return { 0 } end
apply_writes({ session = KEYS[3], history = KEYS[4], offers = KEYS[5], turn = KEYS[6] }, ARGV[3], ARGV[4])
local keys, max, window = windows_args(7, 7)
if #keys > 0 then
  local wait = windows_wait(keys, max, window, now)
  if wait > 0 then return { 2, wait } end
  windows_take(keys, window, ARGV[6], now)
end
-- The mark names the attempt's time and lease token, so a later holder can say whose
-- attempt has no recorded answer.
if ARGV[5] ~= "" then redis.call("HSET", KEYS[6], "sending:" .. ARGV[5], now .. " " .. ARGV[2]) end
return { 1 }

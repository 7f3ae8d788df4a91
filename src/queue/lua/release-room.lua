--[[
  Hands a held room back at once (a worker shutting down, or a room whose next event
  belongs to another lane): nothing about its turn changes; the lease is freed and
  the room is pending again in the given lane when it still has events.

  KEYS[1..4]  the room's lease, the holder's lane running zset, the pending zset of
              the lane the room goes back to (same shard), the room's inbox
  ARGV[1]  room
  ARGV[2]  lease token

  Returns {"released", 1 when the room was left pending (wake a worker) else 0}, or
  {"lost"} when the lease is not the caller's.
]]
local now = now_ms()
if not holds(KEYS[1], KEYS[2], ARGV[1], ARGV[2], now) then return { "lost" } end
return { "released", release(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], now, false) }

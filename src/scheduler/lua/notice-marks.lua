--[[
  notice-marks: each receiver's mark that every outage notice it sent without a send
  slot before then is in the send windows (src/edge/unbooked-notices.ts), and the count
  the first bookings after an outage wait to see at 0 (src/scheduler/notice-marks.ts).

  KEYS
    marks     per receiver, the Redis time (ms) of its latest mark (zset)
  ARGS
    mode      "mark": the receiver's mark is now; "pending": count the receivers not
              marked since agoMs ago; "probe": a write that changes nothing (refused
              while Redis refuses writes, as a script is at its first write)
    receiver  the receiver marking (mark)
    notAfter  a mark run later than this (Redis ms) is not taken: sent before an
              outage, it may run after it (ioredis sends it again on reconnecting),
              when a notice has gone without a slot since (mark)
    agoMs     since when a receiver must have marked (pending)
    staleMs   a mark this much older than that is a receiver gone (pending); one this
              much older than now is dropped (mark)
  REPLY
    now       Redis' time (ms)
    taken     whether the mark was taken (mark)
    pending   receivers not marked since then and not gone (pending; else 0)
]]
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if A.mode == "mark" then
  if A.notAfter and now > A.notAfter then return cmsgpack.pack({ now = now, taken = false, pending = 0 }) end
  redis.call("ZADD", K.marks, now, A.receiver)
  redis.call("ZREMRANGEBYSCORE", K.marks, "-inf", "(" .. (now - A.staleMs))
  redis.call("PEXPIRE", K.marks, A.staleMs)
  return cmsgpack.pack({ now = now, taken = true, pending = 0 })
end
if A.mode == "probe" then
  -- XX: no receiver is named "", so nothing is added; OOM and MISCONF refuse it all the same.
  redis.call("ZADD", K.marks, "XX", now, "")
  return cmsgpack.pack({ now = now, taken = false, pending = 0 })
end
local since = now - A.agoMs
local pending = redis.call("ZCOUNT", K.marks, since - A.staleMs, "(" .. since)
return cmsgpack.pack({ now = now, taken = false, pending = pending })

--[[
  check-flood: the flood check on its own, for an event that must pass it before it
  can be built (a file is downloaded only once admitted); it is enqueued later
  without a check.

  KEYS
    inbox         the room's inbox list
    counter       the person's turn counter (in the room's shard)
    noticeQueue   the person's "queue full" notice key in the room
    noticeRate    the person's "too fast" notice key in the room
  ARGS
    perMinute     turns a person may start per minute
    cap           events the room may hold waiting
  REPLY
    kind          "admitted", or "refused" (flood.lua)
    limit         (refused) "queue" (the room's queue is full) or "rate" (too fast)
    noticeDue     (refused) true when the one notice must be sent now
]]
local refused = flood_refusal({
  counter = K.counter,
  noticeQueue = K.noticeQueue,
  noticeRate = K.noticeRate,
  perMinute = A.perMinute,
  cap = A.cap,
}, K.inbox)
return cmsgpack.pack(refused or { kind = "admitted" })

--[[
  claim-room: takes a due (or abandoned) room of a lane under a new lease for a
  worker, and reads what its head turn needs (claim.lua).

  KEYS
    pending       the lane's pending zset (room → due, Redis ms)
    running       the lane's running zset (room → lease expiry, Redis ms)
    lease         the room's lease
    inbox         the room's inbox
    session       the room's session
    turn          the room's turn record
  ARGS
    room          the room
    token         the new lease token
    leaseMs       lease length, ms
    turnRecordMs  how long a turn record is kept, ms
    takeoverHoldMs  ms a room whose lease expired is still left to its holder (Redis
                  refused writes lately: claim.lua), or nil
  REPLY
    kind          "claimed", "later", "held" or "gone" (claim.lua)
    head          (claimed) the head event JSON
    session       (claimed) the session JSON, absent when none
    record        (claimed) the head turn's record
    takeover      (claimed) true when taken over from an expired lease
    now           (claimed) Redis ms
    dueInMs       (later) ms until the room is due
]]
return cmsgpack.pack(claim_room(K, A.room, A.token, A.leaseMs, A.turnRecordMs, now_ms(), A.takeoverHoldMs))

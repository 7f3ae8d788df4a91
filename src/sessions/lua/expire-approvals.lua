--[[
  expire-approvals: records approvals whose time ran out, each exactly once. All three
  keys share the {audit} hash tag, so the script runs in one Redis Cluster slot.

  KEYS
    open      open approvals: zset of approval id by the ms it expires
    info      open approval info: hash of approval id -> JSON entry for the trail
    trail     the audit trail stream
  ARGS
    now       ms: approvals expiring at or before this are taken
    minId     the trail's oldest id to keep (ms; XADD MINID, exact)
    limit     most approvals taken in one call
  REPLY
    recorded  how many approvals were recorded as expired
]]
local due = redis.call("ZRANGEBYSCORE", K.open, "-inf", A.now, "LIMIT", 0, A.limit)
local recorded = 0
for _, id in ipairs(due) do
  redis.call("ZREM", K.open, id)
  local info = redis.call("HGET", K.info, id)
  redis.call("HDEL", K.info, id)
  if info then
    redis.call("XADD", K.trail, "MINID", A.minId, "*", "entry", info)
    recorded = recorded + 1
  end
end
return cmsgpack.pack({ recorded = recorded })

--[[
  expire-approvals: records approvals whose time ran out, each exactly once.

  KEYS[1]  open approvals: zset of approval id by the ms it expires
  KEYS[2]  open approval info: hash of approval id -> JSON entry for the trail
  KEYS[3]  audit trail stream
  ARGV[1]  now (ms): approvals expiring at or before this are taken
  ARGV[2]  the trail's oldest id to keep (ms; XADD MINID, exact)
  ARGV[3]  most approvals taken in one call

  Returns the number of approvals recorded as expired. All three keys share the
  {audit} hash tag, so the script runs in one Redis Cluster slot.
]]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local recorded = 0
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  local info = redis.call('HGET', KEYS[2], id)
  redis.call('HDEL', KEYS[2], id)
  if info then
    redis.call('XADD', KEYS[3], 'MINID', ARGV[2], '*', 'entry', info)
    recorded = recorded + 1
  end
end
return recorded

-- faster_multi_renew: the watchdog's renewal of one holder's values of a
-- faster multi lock (Redisson's FastMultilockTask, 4.7.0).
-- KEYS[1] the group's hash.
-- ARGV[1] lease in ms; ARGV[2] the renewing client's wall clock in ms
-- since the epoch; ARGV[3] holder field; ARGV[4..] the values' fields.
-- When every value still names the holder, each value's expire_time is
-- raised to the clock plus the lease, the hash's TTL raised to the lease,
-- and it returns 1. It returns 0 when the hash is gone, or at the first
-- value that names another holder or none; the values before it have been
-- renewed by then.
local lease = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local holder = ARGV[3]
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
for i = 4, #ARGV do
  if redis.call('hget', KEYS[1], ARGV[i]) ~= holder then
    return 0
  end
  local expireField = ARGV[i] .. ':' .. holder .. ':expire_time'
  local expires = redis.call('hget', KEYS[1], expireField)
  if tonumber(expires) < lease + now then
    redis.call('hset', KEYS[1], expireField, lease + now)
  end
end
if redis.call('pttl', KEYS[1]) < lease then
  redis.call('pexpire', KEYS[1], lease)
end
return 1

-- rw_read_renew: the watchdog's renewal of a read holder.
-- KEYS[1] lock hash; KEYS[2] this holder's timeout key prefix
-- ("redisson_rwlock_timeout:{<lock>}:<client id>:<owner>:rwlock_timeout").
-- ARGV[1] lease in ms; ARGV[2] read holder field.
-- While the holder holds a read lock, resets the hash's TTL and that of each
-- of this holder's own read acquisitions' timeout keys to the lease and
-- returns 1; else returns 0. Other readers' timeout keys are left alone: a
-- reader whose client died keeps its hold only for its own lease, not for as
-- long as another reader lives (Redisson's cross-instance zombie renewal,
-- fixed in 4.4.0, whose ReadLockTask renews only its own holders' keys).
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if count == nil then
  return 0
end
redis.call('pexpire', KEYS[1], ARGV[1])
for i = count, 1, -1 do
  redis.call('pexpire', KEYS[2] .. ':' .. i, ARGV[1])
end
return 1

-- rw_read_acquire: take or re-enter the read half of a read-write lock.
-- The lock is one hash: field 'mode' ('read' or 'write'), one field per read
-- holder ("<client id>:<owner>") and at most one write holder field
-- ("<client id>:<owner>:write"), each with its hold count. Every read
-- acquisition n of a holder also has a timeout key "<KEYS[2]>:<n>" with the
-- lease as its TTL; the hash lives as long as its longest-lived acquisition.
-- KEYS[1] lock hash; KEYS[2] this holder's timeout key prefix
-- ("redisson_rwlock_timeout:{<lock>}:<client id>:<owner>:rwlock_timeout").
-- ARGV[1] lease in ms; ARGV[2] read holder field; ARGV[3] the same holder's
-- write field.
-- Returns nil when acquired: on a free lock, while it is in read mode, or in
-- write mode when this holder is the writer (a writer may also read: the
-- downgrade). Otherwise the lock's remaining TTL in ms.
local lease = tonumber(ARGV[1])
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1, 'px', lease)
  redis.call('pexpire', KEYS[1], lease)
  return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', lease)
  local left = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(left, lease))
  return nil
end
return redis.call('pttl', KEYS[1])

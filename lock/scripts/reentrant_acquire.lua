-- reentrant_acquire: take or re-enter a reentrant lock.
-- The lock is a hash whose single field names the holder ("<client>:<owner>")
-- and whose value is the hold count; the key carries the lease as its TTL.
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] holder field.
-- Returns nil when acquired (first time or again by the same holder, which
-- also refreshes the lease), or the remaining TTL in ms of the other holder's
-- lock.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])

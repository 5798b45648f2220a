-- reentrant_acquire: take or re-enter a reentrant lock.
-- The lock is a hash with one field per holder ("<client id>:<owner>") whose
-- value is the hold count; the key's TTL is the lease.
-- KEYS[1] lock key; KEYS[2] acquire latch key (only with a request id).
-- ARGV[1] lease in ms; ARGV[2] holder field; ARGV[3] request id or absent;
-- ARGV[4] latch TTL in ms (with a request id).
-- Returns nil when acquired (first time, or again by the same holder, which
-- refreshes the lease), else the other holder's remaining TTL in ms.
-- With a request id the acquire is idempotent: a retry of the same request
-- (a client library re-sending after a lost reply) finds the latch and
-- returns nil without counting a second hold.
local idempotent = ARGV[3] ~= nil and ARGV[3] ~= ''
if idempotent and redis.call('exists', KEYS[2]) == 1 then
  return nil
end
local free = redis.call('exists', KEYS[1]) == 0
if free or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if idempotent then
    redis.call('set', KEYS[2], '1', 'px', ARGV[4])
  end
  return nil
end
return redis.call('pttl', KEYS[1])

-- non_reentrant_acquire: take a non-reentrant lock.
-- The lock is the reentrant lock's hash (one field per holder, "<client
-- id>:<owner>", the key's TTL the lease), but a holder's field never counts
-- past 1: its second acquire is refused with an error reply and changes
-- nothing.
-- KEYS[1] lock key; KEYS[2] acquire latch key (only with a request id).
-- ARGV[1] lease in ms; ARGV[2] holder field; ARGV[3] request id or absent;
-- ARGV[4] latch TTL in ms (with a request id).
-- Returns nil when acquired, the other holder's remaining TTL in ms when
-- another holds it, and the error reply NON_REENTRANT_REACQUIRE when this
-- holder holds it already.
-- With a request id the acquire is idempotent: a retry of the same request
-- (a client library re-sending after a lost reply) finds the latch and
-- returns nil instead of refusing its own first run.
local idempotent = ARGV[3] ~= nil and ARGV[3] ~= ''
if idempotent and redis.call('exists', KEYS[2]) == 1 then
  return nil
end
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if idempotent then
    redis.call('set', KEYS[2], '1', 'px', ARGV[4])
  end
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  return redis.error_reply('NON_REENTRANT_REACQUIRE')
end
return redis.call('pttl', KEYS[1])

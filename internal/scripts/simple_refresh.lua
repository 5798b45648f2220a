-- simple_refresh: compare-and-pexpire. Sets a new TTL on the lock only if it
-- still holds this acquisition's token, so an expired holder cannot extend
-- the next holder's lock.
-- KEYS[1] lock key; ARGV[1] token; ARGV[2] the new TTL in milliseconds.
-- Returns 1 when the TTL was set, 0 when the key is absent or holds another
-- token. Running it twice (a retry after a lost reply) sets the same TTL
-- again, counted from the second run.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0

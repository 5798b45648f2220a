-- simple_obtain: set-if-absent that also takes the lock when it holds the
-- caller's own token (a caller-supplied token: re-obtaining a lock one
-- already holds), with the new TTL, in one step as bsm/redislock's obtain
-- script (v0.9.4) does.
-- KEYS[1] lock key; ARGV[1] token; ARGV[2] TTL in milliseconds.
-- Returns 1 when the key was absent and is now set, 2 when it held the
-- token and its TTL was reset, 0 when it holds another token.
local v = redis.call('get', KEYS[1])
if not v then
  redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if v == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 2
end
return 0

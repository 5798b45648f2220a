-- extend: compare-and-PEXPIRE, the spec's extension. Resets the TTL only
-- while the key still holds this acquisition's token: an extension must never
-- revive a key that expired, nor lengthen another holder's key.
-- KEYS[1] lock key; ARGV[1] token; ARGV[2] TTL in ms.
-- Returns 1 when the TTL was reset, 0 when the key is absent or holds
-- another token.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0

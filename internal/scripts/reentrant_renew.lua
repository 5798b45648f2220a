-- reentrant_renew: the watchdog's renewal.
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] holder field.
-- Returns 1 and resets the TTL while the holder still holds the lock, else 0:
-- the lock expired or was taken over, and the holder must stop trusting it.
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0

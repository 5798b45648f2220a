-- renew_batch: the watchdog's renewal of many holds in one script, as
-- Redisson's batched watchdog (3.44.0+, LockTask) renews up to
-- lockWatchdogBatchSize locks per script.
-- KEYS[i] the lock key of hold i; ARGV[1] lease in ms; ARGV[i + 1] the
-- holder field of hold i.
-- For each hold in turn: while its holder still holds the lock (the field
-- is in the hash), resets the key's TTL to the lease and answers 1; else
-- answers 0 (the key is gone, or the field is: the script does not tell
-- which). Returns the answers as an array, one per key, in KEYS order.
local out = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out

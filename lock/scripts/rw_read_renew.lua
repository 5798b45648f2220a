-- rw_read_renew: the watchdog's renewal of a read holder.
-- KEYS[1] lock hash; KEYS[2] the lock's key prefix ("{<lock>}").
-- ARGV[1] lease in ms; ARGV[2] read holder field.
-- While the holder holds a read lock, resets the hash's TTL and that of every
-- read acquisition's timeout key, of every holder (as Redisson does), to the
-- lease and returns 1; else returns 0.
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return 0
end
redis.call('pexpire', KEYS[1], ARGV[1])
for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
  local count = tonumber(redis.call('hget', KEYS[1], field))
  if count ~= nil then
    for i = count, 1, -1 do
      redis.call('pexpire', KEYS[2] .. ':' .. field .. ':rwlock_timeout:' .. i, ARGV[1])
    end
  end
end
return 1

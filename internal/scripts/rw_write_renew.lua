-- rw_write_renew: the watchdog's renewal of the writer.
-- KEYS[1] lock hash; ARGV[1] lease in ms; ARGV[2] write holder field.
-- Returns 1 and resets the TTL while the holder holds the write lock, else 0.
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0

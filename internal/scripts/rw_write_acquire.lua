-- rw_write_acquire: take or re-enter the write half of a read-write lock.
-- KEYS[1] lock hash.
-- ARGV[1] lease in ms; ARGV[2] write holder field ("<client id>:<owner>:write").
-- Returns nil when acquired: on a free lock, or again by the writer, which
-- adds the lease to the remaining TTL (as Redisson does). Otherwise the
-- lock's remaining TTL in ms: readers block a writer, the would-be writer's
-- own read holds included (no upgrade).
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  local left = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], left + tonumber(ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])

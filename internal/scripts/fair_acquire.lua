-- fair_acquire: take, re-enter or queue for a fair lock (Redisson 4.7.0's
-- RedissonFairLock and RedissonNonReentrantFairLock).
-- KEYS[1] lock: a hash of holder field -> hold count, the lease its TTL.
-- KEYS[2] queue: a list of the waiting holder fields, the next one first.
-- KEYS[3] timeouts: a sorted set of the waiting holder fields, each scored
--   with the client-clock time (ms) after which it counts as gone.
-- ARGV[1] lease in ms; ARGV[2] holder field; ARGV[3] the caller's wait in
-- ms (its TryLockFor's wait, else the fair-lock wait timeout); ARGV[4] the
-- caller's wall clock in ms; ARGV[5] 'queue' to join the queue when
-- refused, 'once' for a try that leaves no trace; ARGV[6] '1' reentrant,
-- '0' non-reentrant.
-- Returns nil when acquired. Refused: 1 ('once'), or the time in ms to
-- wait before trying again ('queue': a waiter already queued gets the
-- lock's PTTL, at least 0; a new one, queued last, the time until the
-- waiter before it times out, or the lock's PTTL when none is).
-- A non-reentrant lock's holder asking again gets the error reply
-- NON_REENTRANT_REACQUIRE.
local now = tonumber(ARGV[4])
-- Waiters at the head whose time is up (by the caller's clock) are gone.
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then
    break
  end
  local timeout = redis.call('zscore', KEYS[3], first)
  if timeout == false or tonumber(timeout) > now then
    break
  end
  redis.call('zrem', KEYS[3], first)
  redis.call('lpop', KEYS[2])
end
-- Free, and nobody queued or this caller next: take it, and give every
-- waiter left this caller's wait back.
if redis.call('exists', KEYS[1]) == 0
    and (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  local waiting = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #waiting do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), waiting[i])
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  if ARGV[6] == '0' then
    return redis.error_reply('NON_REENTRANT_REACQUIRE')
  end
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if ARGV[5] == 'once' then
  return 1
end
if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then
  return math.max(0, redis.call('pttl', KEYS[1]))
end
-- Join the queue: time out the caller's wait after the waiter before it
-- (or after the lock's lease when none is).
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last) ~= false then
  ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + now, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl

-- fair_dequeue: a waiter leaves a fair lock's queue when its wait ends
-- unsatisfied (Redisson 4.7.0's RedissonFairLock acquireFailed).
-- KEYS[1] queue; KEYS[2] timeouts (as fair_acquire's). ARGV[1] the
-- waiter's holder field; ARGV[2] the wait in ms it queued with, taken off
-- the timeouts of the waiters behind it (their turn comes that much
-- sooner). Returns nil. A second run finds the waiter gone and changes
-- nothing.
local queue = redis.call('lrange', KEYS[1], 0, -1)
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do
  i = i + 1
end
for j = i + 1, #queue do
  redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[j])
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
return nil

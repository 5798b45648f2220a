-- fenced_acquire: reentrant_acquire that also issues a fencing token.
-- KEYS[1] lock key; KEYS[2] token counter key; KEYS[3] acquire latch key
-- (only with a request id).
-- ARGV[1] lease in ms; ARGV[2] holder field; ARGV[3] request id or absent;
-- ARGV[4] latch TTL in ms.
-- Returns {-1, token} when acquired: every acquisition, reentrant ones
-- included, increments the counter, so tokens only grow. Returns {pttl, -1}
-- when another holder has the lock. With a request id, a retried request
-- returns the token it was first given and issues no new one.
local idempotent = ARGV[3] ~= nil and ARGV[3] ~= ''
if idempotent then
  local given = redis.call('get', KEYS[3])
  if given ~= false then
    return {-1, tonumber(given)}
  end
end
local free = redis.call('exists', KEYS[1]) == 0
if free or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  if idempotent then
    redis.call('set', KEYS[3], token, 'px', ARGV[4])
  end
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}

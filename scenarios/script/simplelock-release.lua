-- simple_release: compare-and-delete. Deletes the lock only if it still holds
-- this acquisition's token, so an expired holder cannot delete the next
-- holder's lock.
-- KEYS[1] lock key; KEYS[2] (optional) the release latch of this
-- acquisition; ARGV[1] token; ARGV[2] the latch's TTL in milliseconds.
-- With the latch, a release that deleted the lock leaves the latch, and a
-- retry of that release (go-redis resends it when the reply was lost)
-- finds it and answers as the first attempt did instead of "not held".
-- Returns 1 when deleted (or deleted by an earlier attempt), 0 when the key
-- is absent or holds another token.
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[1])
  if KEYS[2] then
    redis.call('set', KEYS[2], '1', 'PX', ARGV[2])
  end
  return 1
end
if KEYS[2] and redis.call('exists', KEYS[2]) == 1 then
  return 1
end
return 0

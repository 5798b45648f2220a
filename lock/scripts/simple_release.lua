-- simple_release: compare-and-delete. Deletes the lock only if it still holds
-- this acquisition's token, so an expired holder cannot delete the next
-- holder's lock.
-- KEYS[1] lock key; ARGV[1] token.
-- Returns 1 when deleted, 0 when the key is absent or holds another token.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0

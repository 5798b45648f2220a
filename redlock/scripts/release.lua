-- release: compare-and-delete, the spec's unlock. Deletes the key only while
-- it still holds this acquisition's token, so a holder whose key expired
-- cannot delete the next holder's key.
-- KEYS[1] lock key; ARGV[1] token.
-- Returns 1 when deleted, 0 when the key is absent or holds another token.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0

-- The classic mistake: release by plain DEL, whoever holds the key now.
-- A release that lands after the holder's lease deletes the next holder's
-- lock. KEYS[1] the lock key. Returns 1 (the key was deleted, or there was
-- none: this release never says "not held").
redis.call('del', KEYS[1])
return 1

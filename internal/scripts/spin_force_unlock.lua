-- spin_force_unlock: delete a spin lock whoever holds it (no message: its
-- waiters poll).
-- KEYS[1] lock key.
-- Returns 1 when a lock was deleted, else 0.
return redis.call('del', KEYS[1])

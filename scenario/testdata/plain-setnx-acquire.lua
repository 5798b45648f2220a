-- SimpleLock's acquire with PlainSetNX: SET NX PX alone, without GET. A
-- retry of an acquire whose reply was lost finds the key its own first
-- attempt set, and is refused. KEYS[1] lock key; ARGV[1] token; ARGV[2]
-- TTL in ms. Returns OK when set, nil when the key exists.
return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])

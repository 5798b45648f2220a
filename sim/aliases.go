package sim

import "github.com/locksim/locksim/setup"

// Temporary aliases of the types and values that moved to package setup,
// while the packages that use them move over one by one.
type (
	NodeConfig    = setup.NodeConfig
	ReplicaConfig = setup.ReplicaConfig
	ClientConfig  = setup.ClientConfig
	Persistence   = setup.Persistence
	RetryPolicy   = setup.RetryPolicy
	LuaMode       = setup.LuaMode
	Dist          = setup.Dist
	OpSelector    = setup.OpSelector
	OpEvent       = setup.OpEvent
	Rule          = setup.Rule
	MsgSet        = setup.MsgSet
)

const (
	PersistNone     = setup.PersistNone
	PersistEverySec = setup.PersistEverySec
	PersistAlways   = setup.PersistAlways
	LuaFast         = setup.LuaFast
	LuaMiniredis    = setup.LuaMiniredis
	LuaInterpreted  = setup.LuaInterpreted
	MaxDuration     = setup.MaxDuration
	OpCall          = setup.OpCall
	OpApplied       = setup.OpApplied
	OpReturn        = setup.OpReturn
	Requests        = setup.Requests
	Replies         = setup.Replies
	Pushes          = setup.Pushes
	AllMessages     = setup.AllMessages
)

var (
	NoRetry          = setup.NoRetry
	GoRedisRetry     = setup.GoRedisRetry
	RedissonRetry    = setup.RedissonRetry
	Redisson336Retry = setup.Redisson336Retry
	OpEvents         = setup.OpEvents
	ParsePersistence = setup.ParsePersistence
	ArgStrings       = setup.ArgStrings
	Fixed            = setup.Fixed
	Uniform          = setup.Uniform
	Exp              = setup.Exp
)

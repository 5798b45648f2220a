// Package resend carries one request option from the lock code to the
// connection that sends the request: whether the client library may send
// the request again after its response timed out.
//
// Redisson (3.37.0 to at least 4.7.0) sends a lock's acquire and unlock
// scripts with noRetry when its configuration is a single server
// (CommandAsyncService.syncedEval falls back to evalWriteNoRetryAsync): its
// RedisExecutor then fails the call after the response timeout instead of
// resending it, because a resent acquire that had run would count twice.
// Every other request, and in a replicated configuration the lock scripts
// too (they go out in a batch with their WAIT, which is resent whole), may
// be resent. The option rides on the context because lock.Conn's methods
// have no other place for it; a Conn that does not model a library which
// tells the two apart (go-redis resends whatever its MaxRetries allows)
// ignores it.
package resend

import "context"

type key struct{}

// Forbid returns ctx marked: a request sent with it is not sent again
// after its response timed out. A context marked already is returned as it
// is, and context.Background() marked is made once: the lock code marks
// every acquire and unlock script, and each mark is an allocation.
func Forbid(ctx context.Context) context.Context {
	if ctx == context.Background() {
		return forbiddenBackground
	}
	if Forbidden(ctx) {
		return ctx
	}
	return context.WithValue(ctx, key{}, true)
}

// forbiddenBackground is context.Background() marked by Forbid.
var forbiddenBackground = context.WithValue(context.Background(), key{}, true)

// Forbidden reports whether ctx was marked by Forbid.
func Forbidden(ctx context.Context) bool {
	v, _ := ctx.Value(key{}).(bool)
	return v
}

// Package nilctx holds, for the lock packages' tests, the checks of what
// the locks refuse before sending anything: every exported method of a
// value that takes a context.Context first, called with a nil one, must
// refuse it with lock.ErrInvalid rather than panic (found by reflection,
// so that a new method is covered without a list), and WantInvalid checks
// one such refusal.
package nilctx

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/locksim/locksim/lock"
)

// Call is one method called with a nil context: its error (the last
// result, nil when it returned none) or the value it panicked with.
type Call struct {
	Method string
	Err    error
	Panic  any
}

// ctxType is context.Context's interface type.
var ctxType = reflect.TypeFor[context.Context]()

// Calls calls every exported method of v whose first parameter is a
// context.Context, in name order, with a nil context and, for every other
// parameter, fill's value for its type (a variadic parameter gets none).
func Calls(v any, fill func(reflect.Type) reflect.Value) []Call {
	rv := reflect.ValueOf(v)
	var out []Call
	for i := range rv.NumMethod() {
		m, mt := rv.Type().Method(i), rv.Method(i).Type()
		if mt.NumIn() == 0 || mt.In(0) != ctxType {
			continue
		}
		args := []reflect.Value{reflect.Zero(ctxType)}
		for j := 1; j < mt.NumIn(); j++ {
			if mt.IsVariadic() && j == mt.NumIn()-1 {
				break
			}
			args = append(args, fill(mt.In(j)))
		}
		out = append(out, call(m.Name, rv.Method(i), args))
	}
	return out
}

// call calls f with args, recovering a panic into the Call.
func call(name string, f reflect.Value, args []reflect.Value) (c Call) {
	c.Method = name
	defer func() { c.Panic = recover() }()
	res := f.Call(args)
	if n := len(res); n > 0 {
		c.Err, _ = res[n-1].Interface().(error)
	}
	return c
}

// Fill is a fill for Calls and Require: each of vals for its own type,
// and otherwise "o" for a string, 10ms for a time.Duration (a valid lease
// and wait), 1 for an int, []string{"a"} for a []string, the zero value
// for anything else.
func Fill(vals ...any) func(reflect.Type) reflect.Value {
	byType := map[reflect.Type]reflect.Value{}
	for _, v := range append([]any{"o", 10 * time.Millisecond, 1, []string{"a"}}, vals...) {
		byType[reflect.TypeOf(v)] = reflect.ValueOf(v)
	}
	return func(ty reflect.Type) reflect.Value {
		if v, ok := byType[ty]; ok {
			return v
		}
		return reflect.Zero(ty)
	}
}

// Require calls v's methods that take a context with a nil one (Calls)
// and fails t unless there are methods of them and each refuses it
// (WantInvalid) without a panic. name names v in the failures.
func Require(t testing.TB, name string, v any, methods int, fill func(reflect.Type) reflect.Value) {
	t.Helper()
	calls := Calls(v, fill)
	if len(calls) != methods {
		t.Errorf("%s: %d methods take a context, want %d", name, len(calls), methods)
	}
	for _, c := range calls {
		if c.Panic != nil {
			t.Errorf("%s.%s(nil ctx) panicked: %v", name, c.Method, c.Panic)
			continue
		}
		WantInvalid(t, name+"."+c.Method+"(nil ctx)", c.Err)
	}
}

// WantInvalid fails t unless err is a refusal of a bad argument:
// lock.ErrInvalid, a known outcome (lock.IsUnknown false).
func WantInvalid(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, lock.ErrInvalid) || lock.IsUnknown(err) {
		t.Errorf("%s: err = %v (IsUnknown %v); want lock.ErrInvalid, a known outcome", what, err, lock.IsUnknown(err))
	}
}

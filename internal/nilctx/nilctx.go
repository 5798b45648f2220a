// Package nilctx calls, for the lock packages' tests, every exported
// method of a value that takes a context.Context first with a nil one, so
// that a test can require each to refuse it with an error rather than
// panic, without a list of methods that a new method could be missing from.
package nilctx

import (
	"context"
	"reflect"
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

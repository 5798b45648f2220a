package lock

import (
	"embed"
	"fmt"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// mustScript loads an embedded script; a missing file is a build mistake.
func mustScript(name string) *Script {
	src, err := scriptFS.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("lock: embedded script %s: %v", name, err))
	}
	return NewScript(name, string(src))
}

// Scripts of the simple lock.
var (
	simpleRelease = mustScript("simple_release")
)

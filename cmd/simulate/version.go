package main

import (
	"runtime/debug"
	"strings"
)

// buildVersion is what simulate -version prints and what a partial result
// records as its Build (sweep.Header): the module's path and version, the
// VCS revision, its time and whether the tree was modified when the build
// stamped them (go build does, in a repository, unless -buildvcs=false),
// and the Go version. Two binaries with the same string compute the same
// outcomes, which is why a merge requires its parts' to be equal.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "simulate (no build information)"
	}
	path, version := bi.Main.Path, bi.Main.Version
	if path == "" {
		path = "github.com/locksim/locksim"
	}
	if version == "" {
		version = "(devel)"
	}
	var vcs []string
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		vcs = append(vcs, "revision "+rev)
	}
	if t := settings["vcs.time"]; t != "" {
		vcs = append(vcs, t)
	}
	if settings["vcs.modified"] == "true" {
		vcs = append(vcs, "modified")
	}
	v := "simulate " + path + " " + version
	if len(vcs) > 0 {
		v += " (" + strings.Join(vcs, ", ") + ")"
	}
	return v + " " + bi.GoVersion
}

package scenario

// The script kind: a lock given as Lua files named in the scenario
// (traffic.ScriptLock), read by the loader beside the scenario file.

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	luaparse "github.com/yuin/gopher-lua/parse"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/traffic"
)

// Script is the script kind's config: a user's lock whose acquire, release
// and (optional) extend are the Lua files the scenario names.
type Script struct {
	traffic.ScriptConfig
	// Files are the scripts' files as the scenario names them (acquire,
	// release, extend; "" for no extend).
	Files [3]string
}

// Kind is traffic.KindScript.
func (*Script) Kind() string { return traffic.KindScript }

// Fields are the scripts, their conventions and a user's lock's.
func (*Script) Fields() []string {
	return append([]string{"acquire", "release", "extend", "reply", "owner_in"}, userFields...)
}

// scriptRoles are the scripts' fields, in Files order; each is run under
// the name "script_<role>", whose suffix the checkers know a release's
// runs by, and an acquire's lease.
var scriptRoles = [3]string{"acquire", "release", "extend"}

func (k *Script) decode(d *decoder, s *Scenario, o *obj, f string) {
	var got [3]*scripts.Script
	for i, role := range scriptRoles {
		if i < 2 && !o.required(role) {
			return
		}
		got[i] = d.luaFile(o, f, role)
	}
	k.Files = [3]string{o.str("acquire", ""), o.str("release", ""), o.str("extend", "")}
	uc := d.user(s, o, f, false) // nothing renews a script lock's key: a lease, never watchdog
	def := traffic.OwnerInValue
	if uc.Model != "simple" {
		def = traffic.OwnerInField
	}
	k.ScriptConfig = traffic.ScriptConfig{UserConfig: uc, Acquire: got[0], Release: got[1], Extend: got[2],
		Reply:   o.oneOf("reply", traffic.ReplyOK, traffic.ReplyOK, traffic.ReplyRedisson),
		OwnerIn: o.oneOf("owner_in", def, traffic.OwnerInValue, traffic.OwnerInField)}
	switch lease := uc.OwnerConfig.Lease; {
	case d.err != nil:
	case lease == 0:
		d.failf(o.at("lease"), join(f, "lease"), scriptNeedsLease)
	case uc.Model == "fenced" && k.OwnerIn == traffic.OwnerInValue:
		d.failf(o.at("owner_in"), join(f, "owner_in"), "a fenced lock's acquire records its token, so its holder is found by field (owner_in: field)")
	case uc.ExtendEvery > 0 && k.Extend == nil:
		d.failf(o.at("extend_every"), join(f, "extend_every"), "extensions need an extend script (extend)")
	}
}

// luaFile reads the Lua file named at field role of o (nil when absent):
// through the loader's opener (relative to the scenario file, with its
// limits), an error naming the field when it cannot be read or is empty.
func (d *decoder) luaFile(o *obj, f, role string) *scripts.Script {
	n, rf, ok := o.scalar(role)
	if !ok || d.err != nil {
		return nil
	}
	if n.Value == "" {
		d.failf(n, rf, "want the path of a Lua file")
		return nil
	}
	data, p, err := d.open(n.Value)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A built-in scenario's file printed alone (list -yaml) names
		// scripts that are not beside the copy.
		d.failf(n, rf, "%v (a built-in scenario's scripts: simulate list -out DIR NAME writes its file with them)", trimOwnPath(err, p))
		return nil
	case err != nil:
		d.failf(n, rf, "%v", trimOwnPath(err, p))
		return nil
	case strings.TrimSpace(string(data)) == "":
		d.failf(n, rf, "%s is empty", p)
		return nil
	}
	if err := luaSyntax(string(data), p); err != nil {
		d.failf(n, rf, "%v", err)
		return nil
	}
	return scripts.New("script_"+role, string(data))
}

// luaSyntax is nil when src, the Lua file p, parses, and otherwise an
// error naming the file, the line and what the parser found: a script
// that does not compile would fail every call it is in (Redis answers
// each EVAL "Error compiling script"), so the run would judge a lock
// that never ran. It is the grammar alone (gopher-lua's parser, Lua 5.1
// as Redis's), not an interpreter: what it refuses neither Redis nor the
// simulation runs.
func luaSyntax(src, p string) error {
	_, err := luaparse.Parse(strings.NewReader(src), p)
	var pe *luaparse.Error
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	if pe.Pos.Line == luaparse.EOF {
		return fmt.Errorf("%s: at its end: %s (the script does not compile)", p, pe.Message)
	}
	return fmt.Errorf("%s:%d: %s near %q (the script does not compile)", p, pe.Pos.Line, pe.Message, pe.Token)
}

// trimOwnPath is err's text, with the path it names once.
func trimOwnPath(err error, p string) string {
	msg := err.Error()
	if strings.Contains(msg, p) {
		return msg
	}
	return fmt.Sprintf("%s: %s", p, msg)
}

// scriptNeedsLease is the error of a script lock without a lease, the
// algorithm section's or a client entry's (scriptLease).
const scriptNeedsLease = "a script lock needs a lease (its ARGV[2]): nothing renews its key but the extend script"

// scriptLease is the script kind's lease rule: a duration, not watchdog.
func scriptLease(lease time.Duration) string {
	if lease == 0 {
		return scriptNeedsLease
	}
	return ""
}

func (k *Script) settings() settings {
	return settings{holding: &k.Holding, owner: &k.OwnerConfig, extendEvery: &k.ExtendEvery, group: &k.Group, lockWaits: true,
		leaseRule: scriptLease}
}

func (k *Script) userConfig() traffic.UserConfig { return k.UserConfig }

// Model is the model the scripts claim (userModel).
func (k *Script) Model() checker.LockKind { return userModel(k.UserConfig.Model) }

// LinOptions are none, as custom's.
func (*Script) LinOptions() []checker.LinOption { return nil }

// LockKey is the key.
func (k *Script) LockKey() string { return k.Key }

// Ops are a user's lock's.
func (*Script) Ops() []string { return userOps }

// StartWorkload starts traffic.ScriptLock.
func (k *Script) StartWorkload(c traffic.Client, _ *traffic.Resource) error {
	return traffic.ScriptLock(c, k.ScriptConfig)
}

// Package detlint is a determinism lint for the simulated code paths of
// locksim.
//
// The simulator is only reproducible from a seed if the code it drives
// never consults a source of nondeterminism the simulation does not control:
// the wall clock, the process-global random generator, the Go scheduler
// (goroutines and select), or Go's randomized map iteration order. detlint
// finds those uses so they are either rewritten in terms of the simulation's
// runtime interfaces or explicitly exempted with a reasoned directive.
//
// Rules:
//
//   - wallclock: package-level functions of "time" that read or wait on the
//     real clock (Now, Since, Until, Sleep, After, AfterFunc, Tick, NewTimer,
//     NewTicker). The types time.Duration and time.Time and their constants
//     and methods are fine.
//   - globalrand: any import of "math/rand" (v1, whose top-level functions
//     share a global source), and any use of a package-level function of
//     "math/rand/v2" other than the constructors New, NewPCG, NewChaCha8 and
//     NewZipf. Methods of an explicitly seeded *rand.Rand are fine.
//   - goroutine: any go statement.
//   - select: any select statement.
//   - maprange: a range loop over a map, or directly over maps.Keys,
//     maps.Values or maps.All (which iterate in map order). Ranging over
//     slices.Sorted(maps.Keys(m)) is fine.
//
// Exemptions are comment directives that must carry a reason:
//
//	//detlint:allow <rule>[,<rule>...] <reason>
//
// on the line of the finding or the line directly above it exempts that line,
// and
//
//	//detlint:file-allow <rule>[,<rule>...] <reason>
//
// anywhere in a file exempts the whole file for those rules. A malformed
// directive (no reason, unknown rule or unknown directive) is itself reported
// under the rule "directive" and exempts nothing.
package detlint

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Rule names. They are the identifiers used in findings and in directives.
const (
	RuleWallclock  = "wallclock"
	RuleGlobalRand = "globalrand"
	RuleGoroutine  = "goroutine"
	RuleSelect     = "select"
	RuleMapRange   = "maprange"
	// RuleDirective reports malformed exemption directives. It cannot itself
	// be exempted, so a broken exemption can never hide.
	RuleDirective = "directive"
)

// Rules lists the rules that directives may name, so that a typo in a
// directive is reported instead of silently exempting nothing.
var Rules = []string{RuleWallclock, RuleGlobalRand, RuleGoroutine, RuleSelect, RuleMapRange}

// DefaultPatterns are the packages that run inside the simulation and so must
// be deterministic. The command and the project test share them so that the
// two can't drift apart.
var DefaultPatterns = []string{"./sim/...", "./setup/...", "./faults/...", "./lock/...", "./redlock/...", "./checker/...", "./traffic/...", "./examples/ownlock/..."}

// wallclockFuncs are the package-level functions of "time" that observe or
// wait on real time. Everything else in "time" is pure arithmetic.
var wallclockFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

// randV2Constructors are the package-level functions of "math/rand/v2" that
// build an explicitly seeded generator instead of drawing from the global one.
var randV2Constructors = map[string]bool{
	"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true,
}

// mapIterFuncs are the functions of package "maps" whose iterators yield in
// map order; ranging over them directly is as nondeterministic as ranging
// over the map.
var mapIterFuncs = map[string]bool{"Keys": true, "Values": true, "All": true}

const (
	allowPrefix     = "//detlint:allow"
	fileAllowPrefix = "//detlint:file-allow"
	directivePrefix = "//detlint:"
)

// Finding is one reported violation. Pos is the position of the offending
// identifier, keyword or import, so the output is clickable in editors.
type Finding struct {
	Pos  token.Position
	Rule string
	Msg  string
}

// String formats the finding as "file:line:col: rule: msg", the conventional
// compiler-style form understood by editors and CI log parsers.
func (f Finding) String() string {
	return fmt.Sprintf("%s: %s: %s", f.Pos, f.Rule, f.Msg)
}

// Check loads the packages matching patterns, relative to dir, and returns
// every determinism finding in their non-test files, sorted by file, line and
// column so that the output is itself deterministic. Load and type errors are
// returned as an error: a lint that cannot see the code must not report it as
// clean.
func Check(dir string, patterns ...string) ([]Finding, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:   dir,
		Tests: false,
		Fset:  token.NewFileSet(),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("detlint: loading %s: %w", strings.Join(patterns, " "), err)
	}
	var loadErrs []error
	for _, pkg := range pkgs {
		for _, e := range pkg.Errors {
			loadErrs = append(loadErrs, fmt.Errorf("%s: %s", pkg.PkgPath, e))
		}
	}
	if len(loadErrs) > 0 {
		return nil, fmt.Errorf("detlint: package load errors:\n%w", errors.Join(loadErrs...))
	}

	var findings []Finding
	seen := make(map[string]bool) // guards against a file appearing in two packages
	for _, pkg := range pkgs {
		for _, file := range pkg.Syntax {
			name := cfg.Fset.File(file.Pos()).Name()
			if strings.HasSuffix(name, "_test.go") || seen[name] {
				continue
			}
			seen[name] = true
			findings = append(findings, checkFile(cfg.Fset, pkg.TypesInfo, file)...)
		}
	}
	sort.Slice(findings, func(i, j int) bool {
		a, b := findings[i].Pos, findings[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return findings[i].Rule < findings[j].Rule
	})
	return findings, nil
}

// ExistingPatterns returns the patterns whose directory exists under dir, so
// that the default list can name packages (such as redlock/) before they are
// written without turning "no such directory" into a load error. Patterns that
// are not relative paths (import paths) are kept as they are.
func ExistingPatterns(dir string, patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") && !filepath.IsAbs(p) && p != "." && p != ".." {
			out = append(out, p)
			continue
		}
		base := p
		if i := strings.Index(p, "..."); i >= 0 { // only wildcards have three dots in a row
			base = p[:i]
			if !strings.HasSuffix(base, "/") { // "./si..." matches under "."
				base = filepath.Dir(base)
			}
		}
		base = strings.TrimSuffix(base, "/")
		if base == "" {
			base = "."
		}
		if !filepath.IsAbs(base) {
			base = filepath.Join(dir, base)
		}
		if st, err := os.Stat(base); err == nil && st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// exemptions records which rules are exempted where in one file.
type exemptions struct {
	file  map[string]bool         // rule -> exempt in the whole file
	lines map[int]map[string]bool // directive line -> rules
}

func (e *exemptions) allowed(rule string, line int) bool {
	if e.file[rule] {
		return true
	}
	return e.lines[line][rule] || e.lines[line-1][rule]
}

// checkFile applies every rule to one file.
func checkFile(fset *token.FileSet, info *types.Info, file *ast.File) []Finding {
	ex, findings := parseDirectives(fset, file)

	report := func(pos token.Pos, rule, format string, args ...any) {
		p := fset.Position(pos)
		if ex.allowed(rule, p.Line) {
			return
		}
		findings = append(findings, Finding{Pos: p, Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}

	for _, imp := range file.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err == nil && path == "math/rand" {
			report(imp.Path.Pos(), RuleGlobalRand,
				`import of "math/rand" (global source); use an explicitly seeded math/rand/v2 *rand.Rand`)
		}
	}

	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false // identifiers in imports are package names, not uses
		case *ast.Ident:
			fn, ok := info.Uses[n].(*types.Func)
			if !ok || fn.Pkg() == nil {
				break
			}
			if sig, ok := fn.Type().(*types.Signature); !ok || sig.Recv() != nil {
				break // methods (t.After, r.IntN) are fine
			}
			switch fn.Pkg().Path() {
			case "time":
				if wallclockFuncs[fn.Name()] {
					report(n.Pos(), RuleWallclock,
						"time.%s reads or waits on the wall clock; use the simulation clock", fn.Name())
				}
			case "math/rand/v2":
				if !randV2Constructors[fn.Name()] {
					report(n.Pos(), RuleGlobalRand,
						"rand.%s draws from the global random source; use a seeded *rand.Rand", fn.Name())
				}
			}
		case *ast.GoStmt:
			report(n.Go, RuleGoroutine, "go statement: goroutine scheduling is not controlled by the simulation")
		case *ast.SelectStmt:
			report(n.Select, RuleSelect, "select statement: choice among ready cases is random")
		case *ast.RangeStmt:
			if isMap(info.TypeOf(n.X)) {
				report(n.For, RuleMapRange,
					"range over map: iteration order is random; range over slices.Sorted(maps.Keys(m))")
			} else if name, ok := mapIterCall(info, n.X); ok {
				report(n.For, RuleMapRange,
					"range over maps.%s: iteration order is random; range over slices.Sorted(maps.Keys(m))", name)
			}
		}
		return true
	})
	return findings
}

// parseDirectives collects the file's exemptions and reports malformed
// directives. A malformed directive exempts nothing, so the violation it was
// meant to cover is still reported next to it.
func parseDirectives(fset *token.FileSet, file *ast.File) (*exemptions, []Finding) {
	ex := &exemptions{file: map[string]bool{}, lines: map[int]map[string]bool{}}
	var findings []Finding
	known := make(map[string]bool, len(Rules))
	for _, r := range Rules {
		known[r] = true
	}
	for _, group := range file.Comments {
		for _, c := range group.List {
			if !strings.HasPrefix(c.Text, directivePrefix) {
				continue
			}
			pos := fset.Position(c.Slash)
			bad := func(format string, args ...any) {
				findings = append(findings, Finding{Pos: pos, Rule: RuleDirective, Msg: fmt.Sprintf(format, args...)})
			}
			var rest string
			var fileWide bool
			switch {
			case hasDirective(c.Text, fileAllowPrefix):
				rest, fileWide = c.Text[len(fileAllowPrefix):], true
			case hasDirective(c.Text, allowPrefix):
				rest = c.Text[len(allowPrefix):]
			default:
				bad("unknown directive %q; want //detlint:allow or //detlint:file-allow", strings.Fields(c.Text)[0])
				continue
			}
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				bad("directive names no rule and gives no reason; want <rule>[,<rule>...] <reason>")
				continue
			}
			rules := strings.Split(fields[0], ",")
			ok := true
			for _, r := range rules {
				if !known[r] {
					bad("unknown rule %q in directive; known rules: %s", r, strings.Join(Rules, ", "))
					ok = false
				}
			}
			if len(fields) < 2 {
				bad("directive for %s gives no reason; every exemption must say why it is safe", fields[0])
				ok = false
			}
			if !ok {
				continue
			}
			for _, r := range rules {
				if fileWide {
					ex.file[r] = true
				} else {
					if ex.lines[pos.Line] == nil {
						ex.lines[pos.Line] = map[string]bool{}
					}
					ex.lines[pos.Line][r] = true
				}
			}
		}
	}
	return ex, findings
}

// hasDirective reports whether text is the directive prefix followed by
// whitespace or the end of the comment, so "//detlint:allowed" is not taken
// for "//detlint:allow".
func hasDirective(text, prefix string) bool {
	if !strings.HasPrefix(text, prefix) {
		return false
	}
	rest := text[len(prefix):]
	return rest == "" || rest[0] == ' ' || rest[0] == '\t'
}

// isMap reports whether t is a map, or a type parameter whose type set
// contains a map (ranging over it is a map range for those instantiations).
func isMap(t types.Type) bool {
	if t == nil {
		return false
	}
	if tp, ok := t.(*types.TypeParam); ok {
		iface, ok := tp.Constraint().Underlying().(*types.Interface)
		if !ok {
			return false
		}
		for i := 0; i < iface.NumEmbeddeds(); i++ {
			switch e := iface.EmbeddedType(i).(type) {
			case *types.Union:
				for j := 0; j < e.Len(); j++ {
					if isMap(e.Term(j).Type()) {
						return true
					}
				}
			default:
				if isMap(e) {
					return true
				}
			}
		}
		return false
	}
	_, ok := t.Underlying().(*types.Map)
	return ok
}

// mapIterCall reports whether x is a call of maps.Keys, maps.Values or
// maps.All, whose iterators yield in the map's random order.
func mapIterCall(info *types.Info, x ast.Expr) (string, bool) {
	call, ok := ast.Unparen(x).(*ast.CallExpr)
	if !ok {
		return "", false
	}
	fun := ast.Unparen(call.Fun)
	if ix, ok := fun.(*ast.IndexExpr); ok { // explicit instantiation maps.Keys[M]
		fun = ix.X
	} else if ix, ok := fun.(*ast.IndexListExpr); ok {
		fun = ix.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return "", false
	}
	fn, ok := info.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "maps" || !mapIterFuncs[fn.Name()] {
		return "", false
	}
	return fn.Name(), true
}

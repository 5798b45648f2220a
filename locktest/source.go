package locktest

// Where a scenario comes from (the committed files, a file, a text, a
// Setup), and how it gets the lock under test.

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/locksim/locksim/internal/near"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/scenarios"
)

// src is a scenario as an Option gave it.
type src interface {
	Option
	// parse loads the scenario with every duration multiplied by scale.
	parse(scale float64) (*scenario.Scenario, error)
	// expr is the Option as a test writes it, for the replay line.
	expr() string
}

// load loads src's scenario, its durations multiplied by scale, with
// impl's lock in place of the file's (scenario.WithUserLock): its
// topology, clients, faults and expectation stay, and of its algorithm
// the group and key, the holding settings, the owners, the lease (a ttl
// is one) and the extension interval.
func load(s src, impl Impl, scale float64) (*scenario.Scenario, error) {
	sc, err := s.parse(scale)
	if err != nil {
		return nil, err
	}
	return sc.WithUserLock(impl.New, string(impl.Model))
}

// builtin is a committed scenario by name (Scenario).
type builtin string

func (b builtin) apply(c *config) error { return c.setSrc(b) }
func (b builtin) expr() string          { return fmt.Sprintf("locktest.Scenario(%q)", string(b)) }

func (b builtin) parse(scale float64) (*scenario.Scenario, error) {
	f := scenarios.Builtin(strings.TrimSuffix(string(b), ".yaml"))
	if f == "" {
		hint := ""
		if guess := near.Field(string(b), scenarios.Names()); guess != "" {
			hint = fmt.Sprintf(": did you mean %q?", guess)
		}
		return nil, fmt.Errorf("locktest: no committed scenario %q%s (simulate list names them, as does the scenarios directory of the locksim module)", string(b), hint)
	}
	data, err := fs.ReadFile(scenarios.FS, f)
	if err != nil {
		return nil, err // a file Builtin found in the command's own files
	}
	return scenario.ParseFS(scenarios.FS, scenarios.Dir, f, data, scale)
}

// file is a scenario file (File).
type file string

func (f file) apply(c *config) error { return c.setSrc(f) }
func (f file) expr() string          { return fmt.Sprintf("locktest.File(%q)", string(f)) }

func (f file) parse(scale float64) (*scenario.Scenario, error) {
	return scenario.LoadScaled(string(f), scale)
}

// yamlText is a scenario's text (YAML).
type yamlText string

func (y yamlText) apply(c *config) error { return c.setSrc(y) }
func (y yamlText) expr() string          { return "locktest.YAML(...)" }

func (y yamlText) parse(scale float64) (*scenario.Scenario, error) {
	return scenario.ParseScaled("locktest.YAML", []byte(y), scale)
}

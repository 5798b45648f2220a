package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestUserScriptThatNeverEndsFailsTheRun: a user's script whose loop never
// ends fails the run, once it has run ScriptWallLimit of wall time, with an
// error that says why, instead of stopping the simulation for good; a
// user's script that ends runs as before.
func TestUserScriptThatNeverEndsFailsTheRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	old := sim.ScriptWallLimit
	sim.ScriptWallLimit = time.Second // far above the ending script's microseconds, even under -race on a loaded machine
	defer func() { sim.ScriptWallLimit = old }()
	for _, src := range []string{"local n = 0 for i = 1, 1000 do n = n + i end return n", "while true do end return 1"} {
		w := sim.New(1)
		must(t, err1(w.AddNode(setup.NodeConfig{Name: "m1"})))
		c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
		must(t, err)
		conn, err := c.Conn("m1")
		must(t, err)
		var got any
		c.Go("eval", func() {
			got, _ = conn.Eval(context.Background(), scripts.New("mine", src), nil)
		})
		err = w.Run(time.Second)
		w.Close()
		loops := strings.Contains(src, "while true")
		switch {
		case !loops && (err != nil || got != int64(500500)):
			t.Errorf("%q: %v, %v; want 500500 and no error", src, got, err)
		case loops && (err == nil || !strings.Contains(err.Error(), "a loop that never ends?")):
			t.Errorf("%q: the run ended with %v; want the error that the script never ended", src, err)
		}
	}
}

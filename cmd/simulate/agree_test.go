package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
)

// TestAgree: a baseline agrees (ok in both), a file whose expectation
// neither backend meets (the control that must not agree) says "no" and
// that its simulation was not as expected, a file real servers cannot run
// says why; the table lands between the README's markers, the rest of the
// file untouched, and the counts add up.
func TestAgree(t *testing.T) {
	redistest.Binary(t)
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	wrong := filepath.Join(dir, "baseline-expects-violation.yaml")
	data, err := os.ReadFile("../../scenarios/baseline-simple.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(data), "name: baseline-simple", "name: baseline-expects-violation", 1)
	i := strings.Index(body, "expect:")
	body = body[:i] + "expect:\n  violated: [mutual-exclusion]\nreal: {note: a planted wrong expectation}\n"
	if err := os.WriteFile(wrong, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(dir, "README.md")
	// The text may quote the markers; only lines of their own count.
	before, after := "# Title\n\ntext before quotes `"+agreeBegin+"` and `"+agreeEnd+"`\n\n"+agreeBegin+"\n", agreeEnd+"\n\ntext after\n"
	if err := os.WriteFile(readme, []byte(before+"old table\n"+after), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "agree", "-attempts", "2", "-quiet", "-readme", readme,
		"../../scenarios/baseline-simple.yaml", wrong, "../../scenarios/k4-pause-replies-in-flight.yaml")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// The baseline agrees at its first real run but for real time's
	// hazards (a worker descheduled on a loaded machine), and its second
	// run then agrees; the planted expectation runs twice, met by neither.
	if !regexp.MustCompile("(?m)^\\| `baseline-simple` \\| ok \\| ok \\(x0\\.2(, run 2 of 2)?\\) \\| yes \\|  \\|$").MatchString(out) {
		t.Errorf("table lacks baseline-simple's agreement:\n%s", out)
	}
	for _, want := range []string{
		"| `baseline-expects-violation` | ok (NOT AS EXPECTED) | ok (x0.2, run 2 of 2) | no | a planted wrong expectation |\n",
		"| `k4-pause-replies-in-flight` | ok | not run | – | cannot run for real: `clients.latency`",
		"3 scenarios: 2 run on real servers, of which 1 agree with the simulation (50%); 1 cannot run for real; 1 simulated NOT AS EXPECTED.",
		"up to 2 runs each until one gives the file's expected verdict.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	got, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if want := before + out + after; string(got) != want {
		t.Errorf("README:\n%s\nwant:\n%s", got, want)
	}
}

// TestAgreeBadInput: bad flags and a README without the markers are bad
// input (exit 2) before anything runs.
func TestAgreeBadInput(t *testing.T) {
	noMarkers := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(noMarkers, []byte("# no table here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agree", "-scale", "0"}, "-scale 0: want a number in (0, 100]"},
		{[]string{"agree", "-attempts", "0"}, "-attempts 0: want 1 to 100"},
		{[]string{"agree", "-attempts", "99999999999"}, "-attempts 99999999999: want 1 to 100"},
		{[]string{"agree", "-workers", "0"}, "-workers 0: need at least 1"},
		{[]string{"agree", "-workers", "257"}, "-workers 257: at most 256"},
		{[]string{"agree", "-scale", "1e300"}, "-scale 1e+300: want a number in (0, 100]"},
		{[]string{"agree", "-readme", noMarkers, "../../scenarios/baseline-simple.yaml"}, "no <!-- simulate agree: begin -->"},
		{[]string{"agree", "../../scenarios/no-such.yaml"}, "no-such.yaml"},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errs, c.want)
		}
	}
}

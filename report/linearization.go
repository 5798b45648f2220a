// Writing Porcupine's visualization of a linearizability check.

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/checker"
)

// WriteLinearizationHTML writes Porcupine's HTML visualization of v (what
// checker.Visualize found: every lock's history, its partial
// linearizations and the annotations) to path, with each client's row
// named after its holder (nameClientRows), through a temporary file and a
// rename (WriteFile), so path is never half-written and a failed write
// leaves nothing behind. The checker computes what to draw; writing files
// is report's job, so that checker stays free of the file system.
func WriteLinearizationHTML(path string, v checker.Visualization) error {
	var buf bytes.Buffer
	if err := porcupine.Visualize(v.Model, v.Info, &buf); err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	html, err := nameClientRows(buf.String(), v.Clients)
	if err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	return WriteFile(path, []byte(html))
}

// rowLabelJS are the expressions of Porcupine's page (v1.3.1) that label
// a row: a client's by its number, a tag's by the tag. The first measures
// the widest label, the second draws them; both must name a client alike,
// or the names would overflow the margin measured for numbers.
var rowLabelJS = []string{
	"i < realClients ? i.toString() : sortedTags[i - realClients]",
	"i < realClients ? i : sortedTags[i - realClients]",
}

// nameClientRows rewrites Porcupine's page so that client i's row is
// labelled clients[i] (its number where clients has no name for it):
// Porcupine's API has ClientId numbers only, and "3" tells a reader
// nothing the timeline's "c1/b" does. It defines the names in a script
// before the page's and makes both label expressions look them up. A page
// without those expressions (another Porcupine version) is an error, not
// a page silently left with numbers: the test that writes one catches
// the upgrade.
func nameClientRows(html string, clients []string) (string, error) {
	if clients == nil {
		clients = []string{} // an array, not null, for the lookups
	}
	names, err := json.Marshal(clients) // escapes <, > and &: safe inside <script>
	if err != nil {
		return "", err
	}
	for _, expr := range rowLabelJS {
		if !strings.Contains(html, expr) {
			return "", fmt.Errorf("porcupine's visualization has no %q to name client rows by: has its version changed?", expr)
		}
		number := strings.TrimPrefix(strings.SplitN(expr, " : ", 2)[0], "i < realClients ? ")
		named := "i < realClients ? (locksimClients[i] ?? " + number + ") : sortedTags[i - realClients]"
		html = strings.ReplaceAll(html, expr, named)
	}
	const script = "<script>"
	i := strings.Index(html, script)
	if i < 0 {
		return "", fmt.Errorf("porcupine's visualization has no %s", script)
	}
	// A script of its own: the page's starts with 'use strict', which
	// must stay its first statement. A top-level const of one classic
	// script is visible to the scripts after it.
	return html[:i] + script + "const locksimClients = " + string(names) + ";</script>\n" + html[i:], nil
}

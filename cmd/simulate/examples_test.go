package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/internal/sweep"
)

// yamlDocs decodes every document of a YAML file.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []map[string]any
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return docs
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
}

// at walks a decoded YAML document by keys (strings) and indices (ints).
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no %q in %v", k, v)
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				t.Fatalf("no [%d] in %v", k, v)
			}
			v = s[k]
		}
	}
	return v
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// checkShardArgs parses the compare command line of shard k of n (args
// after "compare") as compare does, and returns its partial result's file.
func checkShardArgs(t *testing.T, args []string, k, n int) string {
	t.Helper()
	var stderr bytes.Buffer
	f, _, ok := parseCompare(args, &stderr, &stderr)
	if !ok || f.shard != (sweep.Shard{Index: k, Count: n}) || f.partial == "" || f.command()+" -out reports" != referenceCommand {
		t.Fatalf("shard %d/%d: compare %v: shard %v, command %q, partial %q: %s", k, n, args, f.shard, f.command(), f.partial, stderr.String())
	}
	return f.partial
}

// TestExamplesShardManifests: the Kubernetes Indexed Job and the GitHub
// Actions matrix of examples/ run every shard of the reference report's
// command, with command lines compare accepts, and merge exactly their
// partial results into reports/ with the reference command.
func TestExamplesShardManifests(t *testing.T) {
	var job, merge map[string]any
	for _, d := range yamlDocs(t, "../../examples/k8s/compare-job.yaml") {
		if d["kind"] == "Job" {
			job = d
		}
	}
	for _, d := range yamlDocs(t, "../../examples/k8s/merge-job.yaml") {
		if d["kind"] == "Job" {
			merge = d
		}
	}
	if at(t, job, "spec", "completionMode") != "Indexed" {
		t.Fatal("compare-job.yaml: not an Indexed Job")
	}
	n := at(t, job, "spec", "completions").(int)
	if p := at(t, job, "spec", "parallelism").(int); p < 1 || p > n {
		t.Errorf("parallelism %d of %d completions", p, n)
	}
	shard := at(t, job, "spec", "template", "spec", "containers", 0)
	args := strs(t, at(t, shard, "args"))
	var parts []string
	for k := range n {
		var sub []string
		for _, a := range args {
			sub = append(sub, strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(k)))
		}
		if sub[0] != "compare" {
			t.Fatalf("shard args %v", args)
		}
		parts = append(parts, checkShardArgs(t, sub[1:], k, n))
	}
	m := at(t, merge, "spec", "template", "spec", "containers", 0)
	margs := strs(t, at(t, m, "args"))
	if at(t, m, "workingDir") != at(t, shard, "workingDir") || at(t, m, "image") != at(t, shard, "image") {
		t.Errorf("the merge's working directory or image is not the shards'")
	}
	if want := append([]string{"merge", "-out", "reports"}, parts...); !slices.Equal(margs, want) {
		t.Errorf("merge-job.yaml args %v, want %v", margs, want)
	}

	wf := yamlDocs(t, "../../examples/ci/compare-matrix.yml")[0]
	matrix := strs(t, at(t, wf, "jobs", "shard", "strategy", "matrix", "shard"))
	run := func(job, has string) string {
		for _, step := range at(t, wf, "jobs", job, "steps").([]any) {
			if r, ok := step.(map[string]any)["run"].(string); ok && strings.Contains(r, has) {
				return strings.ReplaceAll(r, `"`, "")
			}
		}
		t.Fatalf("workflow job %s: no step runs %q", job, has)
		return ""
	}
	shardCmd, mergeCmd := run("shard", " compare "), strings.Fields(run("merge", " merge "))
	var ciParts []string
	for k, s := range matrix {
		if s != strconv.Itoa(k) {
			t.Fatalf("matrix shards %v, want 0..%d", matrix, len(matrix)-1)
		}
		sub := strings.Fields(strings.ReplaceAll(shardCmd, "${{ matrix.shard }}", s))
		if sub[0] != "$RUNNER_TEMP/simulate" || sub[1] != "compare" {
			t.Fatalf("workflow shard step %q", shardCmd)
		}
		// The artifacts are downloaded into $RUNNER_TEMP/parts.
		ciParts = append(ciParts, strings.Replace(checkShardArgs(t, sub[2:], k, len(matrix)), "$RUNNER_TEMP/", "$RUNNER_TEMP/parts/", 1))
	}
	if want := append([]string{"$RUNNER_TEMP/simulate", "merge", "-out", "reports"}, ciParts...); !slices.Equal(mergeCmd, want) {
		t.Errorf("workflow merge %v, want %v", mergeCmd, want)
	}
}

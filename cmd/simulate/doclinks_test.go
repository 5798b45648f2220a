package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinksResolve: every relative link of the project's Markdown (the
// README, docs/, the examples', the scenarios' and the reports' READMEs)
// names a file or directory that exists, and a link with a #fragment
// names a heading of its target as GitHub renders it, so that a renamed
// heading or a moved file cannot leave a reader at a dead link (the
// partial results' heading changed its version numbers and the link to it
// from docs/cli.md went nowhere).
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	// A link resolves when it names a tracked file, or a directory that
	// holds one: a file that exists only here (untracked, ignored, or
	// named in another case on a case-insensitive file system) is a dead
	// link on GitHub and in a clone.
	tracked := map[string]bool{}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		tracked[f] = true
		for d := filepath.ToSlash(filepath.Dir(f)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			tracked[d] = true
		}
		if strings.HasSuffix(f, ".md") {
			files = append(files, f)
		}
	}
	if len(files) < 10 {
		t.Fatalf("git ls-files found %d Markdown files: %v", len(files), files)
	}
	anchors := map[string]map[string]bool{} // by path relative to root
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := anchors[rel]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[rel] = a
		return a
	}
	checked := 0
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			target, frag, _ := strings.Cut(l.target, "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			dest := rel
			if target != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(rel), target))
				if !tracked[dest] {
					t.Errorf("%s:%d: link to %s: no such file in the repository", rel, l.line, l.target)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !anchorsOf(dest)[frag] {
				t.Errorf("%s:%d: link to %s: %s has no heading with the anchor #%s", rel, l.line, l.target, dest, frag)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d relative links: the link scanner finds too few", checked)
	}
}

type mdLink struct {
	target string
	line   int
}

var (
	mdLinkRE     = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	codeSpanRE   = regexp.MustCompile("`[^`\n]*`")
	mdHeadingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlAnchorRE = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// proseLines calls f with each line of a Markdown text outside its fenced
// code blocks, and the line's number.
func proseLines(text string, f func(line string, n int)) {
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		} else if !fenced {
			f(line, i+1)
		}
	}
}

// markdownLinks lists the inline links of a Markdown text outside fenced
// code blocks and code spans, with their line numbers.
func markdownLinks(text string) []mdLink {
	var links []mdLink
	proseLines(text, func(line string, n int) {
		for _, m := range mdLinkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			links = append(links, mdLink{target: m[1], line: n})
		}
	})
	return links
}

// headingAnchors is the set of anchors GitHub gives a Markdown text's
// headings (and its explicit <a name> anchors): the heading's text
// lower-cased, without its Markdown (code spans' backticks, links'
// brackets and targets), every character but letters, digits, spaces,
// hyphens and underscores dropped, spaces made hyphens; a repeated anchor
// gets -1, -2, ...
func headingAnchors(text string) map[string]bool {
	set := map[string]bool{}
	count := map[string]int{}
	proseLines(text, func(line string, _ int) {
		for _, m := range htmlAnchorRE.FindAllStringSubmatch(line, -1) {
			set[m[1]] = true
		}
		m := mdHeadingRE.FindStringSubmatch(line)
		if m == nil {
			return
		}
		slug := githubSlug(m[1])
		if n := count[slug]; n > 0 {
			set[slug+"-"+strconv.Itoa(n)] = true
		} else {
			set[slug] = true
		}
		count[slug]++
	})
	return set
}

var mdInlineLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

func githubSlug(heading string) string {
	heading = mdInlineLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Every relative link in README.md and docs/ leads somewhere: the file (or directory)
// exists, and an anchor (#…) names a heading of that page as GitHub spells it. Links to
// other sites are not followed (the tests run offline).
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{} // cleaned path -> anchors
	pageAnchors := func(p string) map[string]bool {
		if a, ok := anchors[p]; ok {
			return a
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		a := map[string]bool{}
		for _, s := range mdAnchors(string(b)) {
			a[s] = true
		}
		anchors[p] = a
		return a
	}
	links := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range mdLinks(string(b)) {
			if l.target == "" || regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(l.target) {
				continue // another site, mailto:
			}
			links++
			path, frag, _ := strings.Cut(l.target, "#")
			dest := filepath.Clean(f)
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
				st, err := os.Stat(dest)
				if err != nil {
					t.Errorf("%s:%d: link to %s: no such file", rel, l.line, l.target)
					continue
				}
				if st.IsDir() || frag == "" {
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				continue // anchors into code files are GitHub's line marks
			}
			if !pageAnchors(dest)[frag] {
				t.Errorf("%s:%d: link to %s: no heading with that anchor", rel, l.line, l.target)
			}
		}
	}
	if links < 50 {
		t.Errorf("only %d relative links found: the link parser is broken", links)
	}
}

func TestMdAnchors(t *testing.T) {
	got := mdAnchors("# Reports and comparisons (`fathom report`, `fathom compare`)\n" +
		"## Stalls: how to read one\n```sh\n# not a heading\n```\n## Stalls: how to read one\n" +
		"### [Linked](x.md) *text* Über_alles\n")
	want := []string{"reports-and-comparisons-fathom-report-fathom-compare", "stalls-how-to-read-one",
		"stalls-how-to-read-one-1", "linked-text-über_alles"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("anchors %q, want %q", got, want)
	}
	ls := mdLinks("see [a](x.md#y) and `[b](not-a-link)`\n```\n[c](nor-this)\n```\n[d](z.md \"title\")")
	if len(ls) != 2 || ls[0].target != "x.md#y" || ls[1].target != "z.md" || ls[1].line != 5 {
		t.Errorf("links %+v", ls)
	}
}

var (
	mdHeading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdLink    = regexp.MustCompile(`!?\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	mdCode    = regexp.MustCompile("`[^`]*`")
)

type mdLinkRef struct {
	target string
	line   int
}

// mdLines calls f with every line outside fenced code blocks.
func mdLines(text string, f func(n int, line string)) {
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trim := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			fence = trim[:3]
			continue
		}
		f(i+1, line)
	}
}

func mdLinks(text string) []mdLinkRef {
	var out []mdLinkRef
	mdLines(text, func(n int, line string) {
		line = mdCode.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLinkRef{target: m[2], line: n})
		}
	})
	return out
}

// mdAnchors returns the anchors GitHub gives a page's headings: the heading's text as
// rendered, lower-cased, with punctuation other than - and _ removed and each space a
// hyphen; a repeated one gets -1, -2 ….
func mdAnchors(text string) []string {
	var out []string
	seen := map[string]int{}
	mdLines(text, func(_ int, line string) {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		h := mdLink.ReplaceAllString(m[2], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
				b.WriteRune(r)
			}
		}
		s := b.String()
		if k, ok := seen[s]; ok {
			seen[s] = k + 1
			s = s + "-" + strconv.Itoa(k+1)
		} else {
			seen[s] = 0
		}
		out = append(out, s)
	})
	return out
}

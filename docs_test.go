package showcase_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// slug is GitHub's anchor for a heading: lower case, punctuation but
// hyphens and underscores dropped, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The README and docs/ link only inside the repository, to files that
// exist and headings that do: a clone has no ../shared.
func TestDocsLinks(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md", "CHANGELOG.md")
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		anchors[filepath.Clean(f)] = map[string]bool{}
		for _, m := range mdHeading.FindAllStringSubmatch(string(b), -1) {
			anchors[filepath.Clean(f)][slug(strings.ReplaceAll(m[1], "`", ""))] = true
		}
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			link := m[1]
			if strings.HasPrefix(link, "http://") || strings.HasPrefix(link, "https://") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			path := filepath.Clean(f)
			if target != "" {
				path = filepath.Clean(filepath.Join(filepath.Dir(f), target))
				if strings.HasPrefix(path, "..") {
					t.Errorf("%s links outside the repository: %s", f, link)
					continue
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", f, link)
					continue
				}
			}
			if anchor != "" && anchors[path] != nil && !anchors[path][anchor] {
				t.Errorf("%s links to %s, whose heading does not exist", f, link)
			}
		}
	}
}

// The README is the front door, read in ten minutes: at most 2,500 words
// (as wc -w counts them); the reference lives in docs/.
func TestReadmeLength(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(readme))); n > 2500 {
		t.Errorf("README.md has %d words; the front door holds 2,500: move the detail to docs/", n)
	}
}

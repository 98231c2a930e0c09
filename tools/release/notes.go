package release

import (
	"fmt"
	"regexp"
	"strings"
)

// Notes is the section of a Keep a Changelog file whose "## " heading
// names version (v0.1.0, or 0.1.0 in brackets), without its heading: a
// release's notes. A version the changelog does not describe, or
// describes with nothing under it, is an error: a release says what it
// changes.
func Notes(changelog []byte, version string) (string, error) {
	v := regexp.QuoteMeta(strings.TrimPrefix(version, "v"))
	heading := regexp.MustCompile(`^## \[?v?` + v + `\]?(\s|$)`)
	var out []string
	in := false
	for _, line := range strings.Split(string(changelog), "\n") {
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = heading.MatchString(line)
			continue
		}
		if in {
			out = append(out, line)
		}
	}
	notes := strings.TrimSpace(strings.Join(out, "\n"))
	if notes == "" {
		return "", fmt.Errorf("CHANGELOG.md has no section for %s", version)
	}
	return notes + "\n", nil
}

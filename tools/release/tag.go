package release

import (
	"fmt"
	"os/exec"
	"strings"
)

// Tag makes the release commit of version on top of HEAD in the git
// repository at root (every go.mod naming its siblings at version, no
// replace directives) and tags it for every released module, HEAD left
// detached at it. It returns the tags, for git push.
func Tag(root, version string) ([]string, error) {
	if out, err := git(root, "status", "--porcelain", "--untracked-files=no"); err != nil || out != "" {
		return nil, fmt.Errorf("the working copy has changes (%q, %v): a release is made from a commit", out, err)
	}
	if _, err := git(root, "switch", "--detach", "-q"); err != nil {
		return nil, err
	}
	if err := SetVersion(root, version, false); err != nil {
		return nil, err
	}
	if _, err := git(root, "commit", "-q", "-a", "-m", "Release "+version+": every go.mod names its siblings at "+version+", with no replace directives (go install refuses a module that replaces)"); err != nil {
		return nil, err
	}
	_, released, err := Modules(root)
	if err != nil {
		return nil, err
	}
	var tags []string
	for _, m := range released {
		t := m.Tag(version)
		if _, err := git(root, "tag", "-a", "-m", m.Path+" "+version, t); err != nil {
			return nil, err
		}
		tags = append(tags, t)
	}
	return tags, nil
}

func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

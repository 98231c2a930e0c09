package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// Tag makes the release commit of version on top of HEAD in the git
// repository at root (every go.mod naming its siblings at version, no
// replace directives; go.work replacing them at version with their
// directories) and tags it for every released module, HEAD left
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
	if err := workReplaces(root, version); err != nil {
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

// workReplaces points go.work at the released modules' directories for
// version, so that the release commit builds in the workspace offline as
// main does (without them the go command asks a proxy for the siblings'
// go.mod files at version, which exist only once the tags are pushed).
// go.work is no module's: a user of the modules never reads it.
func workReplaces(root, version string) error {
	p := filepath.Join(root, "go.work")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return err
	}
	_, released, err := Modules(root)
	if err != nil {
		return err
	}
	for _, m := range released {
		if err := wf.AddReplace(m.Path, version, "./"+strings.TrimPrefix(m.Dir, "."), ""); err != nil {
			return err
		}
	}
	wf.Cleanup()
	return os.WriteFile(p, modfile.Format(wf.Syntax), 0o644)
}

func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

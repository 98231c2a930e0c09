package release

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoEnv is the environment of a go command that builds as a user of the
// release would: no workspace, the repository's modules from proxyURL
// (and unchecked by the checksum database, which has never seen them),
// everything else from the module cache this machine already has and
// then its own GOPROXY (never direct), into a module cache of its own (modcache), so that
// nothing under a release's version is left in the machine's.
func GoEnv(proxyURL, modcache string) ([]string, error) {
	vars, err := GoVars(proxyURL, modcache)
	if err != nil {
		return nil, err
	}
	return append(os.Environ(), vars...), nil
}

// GoVars are the variables GoEnv sets, KEY=VALUE.
func GoVars(proxyURL, modcache string) ([]string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("go env: %q", out)
	}
	proxies := []string{proxyURL}
	if _, err := os.Stat(filepath.Join(lines[0], "cache", "download")); err == nil {
		proxies = append(proxies, "file://"+filepath.Join(lines[0], "cache", "download"))
	}
	// The machine's own proxies, but never direct: a module the proxies
	// do not have is not fetched from its origin (this machine reaches
	// only its proxy, and a test sends nothing elsewhere).
	for _, p := range strings.FieldsFunc(lines[1], func(r rune) bool { return r == ',' || r == '|' }) {
		if p != "direct" && p != "off" {
			proxies = append(proxies, p)
		}
	}
	return []string{
		"GOWORK=off",
		"GOPROXY=" + strings.Join(proxies, ","),
		"GONOSUMDB=" + Prefix,
		"GOMODCACHE=" + modcache,
		// -modcacherw: the test's module cache can be removed;
		// -trimpath and CGO_ENABLED=0, as make build and the release
		// build: the packages compiled here are reused from the build
		// cache by those builds and by each other (without -trimpath a
		// path in this module cache is part of every action).
		"GOFLAGS=-modcacherw -trimpath -buildvcs=false",
		"CGO_ENABLED=0",
	}, nil
}

// Check vets (so compiles) every released module with GOWORK=off against a
// proxy of the working copy, with its go.mod as the release commit will
// carry it (no replace directives): what proves a module names everything
// it imports, and that its siblings' zips hold everything they embed.
// Go's output goes to w.
func Check(root string, w io.Writer) error {
	version, err := Version(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "showcase-release-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p := Proxy{Dir: filepath.Join(tmp, "proxy")}
	if err := FromWorkingCopy(p, root, version); err != nil {
		return err
	}
	env, err := GoEnv("file://"+p.Dir, filepath.Join(tmp, "modcache"))
	if err != nil {
		return err
	}
	_, released, err := Modules(root)
	if err != nil {
		return err
	}
	for _, m := range released {
		dir := filepath.Join(root, m.Dir)
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return err
		}
		gomod, err := Rewrite(data, version, false)
		if err != nil {
			return err
		}
		modfile := filepath.Join(tmp, "mod", m.Dir, "go.mod")
		if err := os.MkdirAll(filepath.Dir(modfile), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(modfile, gomod, 0o644); err != nil {
			return err
		}
		if sum, err := os.ReadFile(filepath.Join(dir, "go.sum")); err == nil {
			if err := os.WriteFile(strings.TrimSuffix(modfile, ".mod")+".sum", sum, 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "== %s (GOWORK=off, its siblings at %s from the working copy's proxy)\n", m.Path, version)
		// go vet compiles every package the module imports, type-checks
		// its own, tests included, and links nothing: a build's proof
		// without twenty links. -mod=mod: the siblings' sums are not in
		// go.sum (they change with every edit); they go to the copy
		// beside the go.mod copy.
		cmd := exec.Command("go", "vet", "-mod=mod", "-modfile="+modfile, "./...")
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, w, w
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: go vet: %w", m.Dir, err)
		}
	}
	return nil
}

package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// requireTool finds an external program a test drives for real. Where it is
// missing the test skips with the reason, except in CI (CI set), where a
// missing tool is a failure: scripts/test-deps.sh, run by make test, installs it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(string(trimNL(gopath)), "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := name + " is not installed; scripts/test-deps.sh (run by make test) installs it"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " — required in CI")
	}
	t.Skip(msg)
	return ""
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// buildBinary builds a command of the workspace into a temporary directory.
func buildBinary(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

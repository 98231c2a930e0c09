package showcase_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// make help lists every target the Makefile declares, each with the
// description its "## target: ..." comment gives.
func TestMakeHelp(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on this machine")
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	phony := regexp.MustCompile(`(?m)^\.PHONY: (.+)$`).FindSubmatch(mk)
	if phony == nil {
		t.Fatal("the Makefile has no .PHONY line")
	}
	out, err := exec.Command("make", "--no-print-directory", "help").Output()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			listed[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for _, target := range strings.Fields(string(phony[1])) {
		if listed[target] == "" {
			t.Errorf("make help does not describe %s", target)
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every reference proxy's configuration, filled in as the harness fills it,
// is accepted by the proxy's own checker: a configuration that rots is
// caught by make test, not halfway through make bench.
func TestReferenceConfigurations(t *testing.T) {
	checks := map[string]func(dir, conf string) []string{
		"nginx":   func(dir, conf string) []string { return []string{"-t", "-p", dir, "-c", conf} },
		"haproxy": func(_, conf string) []string { return []string{"-c", "-f", conf} },
		"caddy":   func(_, conf string) []string { return []string{"validate", "--adapter", "caddyfile", "--config", conf} },
	}
	for _, ref := range references {
		t.Run(ref.conf, func(t *testing.T) {
			dir := t.TempDir()
			conf, err := writeConf(ref, dir, "127.0.0.1:18080", "127.0.0.1:18081")
			if err != nil {
				t.Fatal(err)
			}
			text, _ := os.ReadFile(conf)
			for _, want := range []string{"127.0.0.1", "18081"} {
				if !strings.Contains(string(text), want) {
					t.Errorf("%s does not name %s:\n%s", ref.conf, want, text)
				}
			}
			if strings.Contains(string(text), "{{") || strings.Contains(string(text), "<no value>") {
				t.Errorf("%s is not filled in:\n%s", ref.conf, text)
			}
			if _, err := exec.LookPath(ref.bin); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%s is not installed (scripts/test-deps.sh installs %s)", ref.bin, ref.pkg)
				}
				t.Skipf("%s is not installed (apt-get install %s): its configuration is not checked", ref.bin, ref.pkg)
			}
			cmd := exec.Command(ref.bin, checks[ref.bin](dir, conf)...)
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s refuses %s: %v\n%s", ref.bin, filepath.Base(conf), err, out)
			}
		})
	}
}

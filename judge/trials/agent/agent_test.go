package agent

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/budget"
)

// A folder written among other lines comes back whole; a log cut short,
// or altered, or naming a path outside the folder, does not.
func TestFolderThroughALog(t *testing.T) {
	src := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(src, "out", "deep"), 0o755))
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 100000)
	must(t, os.WriteFile(filepath.Join(src, "out", "deep", "report.csv"), big, 0o644))
	must(t, os.WriteFile(filepath.Join(src, "tool.log"), []byte("hello\n"), 0o644))
	var log bytes.Buffer
	log.WriteString("a line before\n")
	must(t, WriteFolder(&log, src))
	log.WriteString("a line after\n")

	dst := t.TempDir()
	must(t, ReadFolder(bytes.NewReader(log.Bytes()), dst))
	got, err := os.ReadFile(filepath.Join(dst, "out", "deep", "report.csv"))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("report.csv came back as %d bytes (%v), want %d", len(got), err, len(big))
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "tool.log")); string(got) != "hello\n" {
		t.Errorf("tool.log came back as %q", got)
	}

	lines := strings.Split(log.String(), "\n")
	cut := strings.Join(lines[:len(lines)/2], "\n")
	if err := ReadFolder(strings.NewReader(cut), t.TempDir()); !errors.Is(err, ErrNoFolder) {
		t.Errorf("a log cut short: %v, want ErrNoFolder", err)
	}
	altered := strings.Replace(log.String(), lines[3], strings.Repeat("A", len(lines[3])), 1)
	if err := ReadFolder(strings.NewReader(altered), t.TempDir()); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("an altered log: %v", err)
	}
}

// The agent runs the tool within its budget (SIGINT at it), takes the
// ground truth and sends back the folder with its result.
func TestRunStopsAtTheBudget(t *testing.T) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	adm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != PathDefects {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"version":3,"setting":"all","active":[],"off":[],"exposure_since":"` + now + `","requests":0,"defects":[]}`))
	}))
	defer adm.Close()
	dir := t.TempDir()
	var log bytes.Buffer
	// A tool that writes its report, then waits; on SIGINT it says so and ends.
	cmd := []string{"sh", "-c", `echo found > report.txt; trap 'echo interrupted; exit 3' INT; while :; do sleep 0.05; done`}
	must(t, Run(context.Background(), Options{Dir: dir, Admin: adm.URL, Command: cmd,
		Limits: budget.Limits{Budget: 500 * time.Millisecond, InterruptGrace: 5 * time.Second, TermGrace: time.Second}}, &log))
	back := t.TempDir()
	must(t, ReadFolder(&log, back))
	for _, f := range []string{"out/report.txt", trials.LogFile, trials.TruthFile, ResultFile} {
		if _, err := os.Stat(filepath.Join(back, f)); err != nil {
			t.Errorf("the folder lacks %s: %v", f, err)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(back, ResultFile))
	if !strings.Contains(string(raw), `"outcome": "stopped at the budget"`) || !strings.Contains(string(raw), `"signal": "SIGINT"`) || strings.Contains(string(raw), "SIGTERM") {
		t.Errorf("agent.json:\n%s", raw)
	}
	if l, _ := os.ReadFile(filepath.Join(back, trials.LogFile)); string(l) != "interrupted\n" {
		t.Errorf("tool.log %q", l)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

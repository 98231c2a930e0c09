package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
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

// The agent runs the tool within its budget (SIGINT at it), saying what
// the instance has seen every second (a live line), takes the ground
// truth and sends back the folder with its result.
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
		Limits: budget.Limits{Budget: 1500 * time.Millisecond, InterruptGrace: 5 * time.Second, TermGrace: time.Second}}, &log))
	var lives []trials.Live
	_, _ = LiveLines(io.Discard, func(l trials.Live) { lives = append(lives, l) }).Write(log.Bytes())
	if len(lives) == 0 || lives[0].Requests != 0 || lives[0].At.IsZero() {
		t.Errorf("live lines in 1.5 s: %+v", lives)
	}
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

// The live lines in the agent's log reach the runner as they come, however
// the log is cut into writes, and the log is kept whole; a live line that
// does not parse is passed on and nothing more.
func TestLiveLines(t *testing.T) {
	t.Parallel()
	l1 := trials.Live{At: time.Unix(1_800_000_000, 0).UTC(), Requests: 3, Reached: []catalogue.ID{"SEC-01"}, Triggered: []catalogue.ID{}}
	l2 := trials.Live{At: time.Unix(1_800_000_001, 0).UTC(), Requests: 9, Reached: []catalogue.ID{"SEC-01", "ERR-01"}, Triggered: []catalogue.ID{"ERR-01"}}
	b1, _ := json.Marshal(l1)
	b2, _ := json.Marshal(l2)
	log := "the tool says hello\n" + LivePrefix + string(b1) + "\n" + LivePrefix + "{not json\n" + LivePrefix + string(b2) + "\n" + begin + "\n"
	var kept bytes.Buffer
	var got []trials.Live
	w := LiveLines(&kept, func(l trials.Live) { got = append(got, l) })
	for i := 0; i < len(log); i += 7 {
		if _, err := w.Write([]byte(log[i:min(i+7, len(log))])); err != nil {
			t.Fatal(err)
		}
	}
	if kept.String() != log {
		t.Error("the log was not kept as written")
	}
	if len(got) != 2 || got[0].Requests != 3 || got[1].Requests != 9 || len(got[1].Triggered) != 1 || !got[1].At.Equal(l2.At) {
		t.Errorf("live lines: %+v", got)
	}
}

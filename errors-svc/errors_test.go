package errorssvc

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/suite"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestLuhnChecksum(t *testing.T) {
	t.Parallel()
	for number, valid := range map[string]bool{
		"79927398713": true, "79927398710": false, "4539148803436467": true,
		"0": true, "": true, "18": true, "81": false, "٧٩٩٢٧٣٩٨٧١٣": true,
	} {
		digits, err := cardDigits(number, reqparse.DigitValue)
		if err != nil {
			t.Fatal(err)
		}
		if got := luhnChecksum(digits)%10 == 0; got != valid {
			t.Errorf("Luhn(%q) valid = %v, want %v", number, got, valid)
		}
	}
}

func TestCardDigitsNamesTheNonDigit(t *testing.T) {
	t.Parallel()
	_, err := cardDigits("٣٤x5", reqparse.DigitValue) // position counts characters, not bytes
	e, ok := err.(digitError)
	if !ok || e.char != 'x' || e.pos != 2 || !strings.Contains(e.Error(), "'x'") {
		t.Fatalf("got %#v, want the digit error for 'x' at 2", err)
	}
	// With ERR-01 switched off only ASCII digits are digits, as the
	// corrected contract's pattern ^[0-9]*$ says.
	_, err = cardDigits("12٣", asciiDigit)
	if e, ok := err.(digitError); !ok || e.char != '٣' || e.pos != 2 {
		t.Fatalf("got %#v, want the digit error for '٣' at 2", err)
	}
}

func TestPythonStr(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`"12"`: "12", `"a\u00e9"`: "aé", `12`: "12", `123456789012345678901234567890`: "123456789012345678901234567890",
		`-0`: "0", `-5`: "-5", `1.5`: "1.5", `1e5`: "1e5", `true`: "True", `false`: "False", `null`: "None",
		`[1]`: "[1]", `{}`: "{}",
	} {
		if got := pythonStr(json.RawMessage(raw)); got != want {
			t.Errorf("pythonStr(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestSQLiteValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want any
	}{
		{`"abc"`, "abc"}, {`12`, int64(12)}, {`-3`, int64(-3)}, {`1.5`, 1.5},
		{`123456789012345678901234567890`, 1.2345678901234568e29}, {`true`, int64(1)}, {`false`, int64(0)}, {`null`, nil},
	}
	for _, tt := range tests {
		got, err := sqliteValue(json.RawMessage(tt.raw))
		if err != nil || got != tt.want {
			t.Errorf("sqliteValue(%s) = %#v, %v; want %#v", tt.raw, got, err, tt.want)
		}
	}
	for _, raw := range []string{`[1]`, `{"a":1}`} {
		if _, err := sqliteValue(json.RawMessage(raw)); err == nil || strings.Contains(err.Error(), "interface") {
			t.Errorf("sqliteValue(%s) error = %v, want a binding error without Go type names", raw, err)
		}
	}
}

func TestEncodeASCII(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"plain":    "",
		"":         "",
		"\x00\x7f": "",
		"héllo":    `'ascii' codec can't encode character '\xe9' in position 1: ordinal not in range(128)`,
		"a€":       `'ascii' codec can't encode character '\u20ac' in position 1`,
		"😀😀":       `'ascii' codec can't encode character '\U0001f600' in position 0`,
	} {
		err := encodeASCII(text)
		if (want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("encodeASCII(%q) = %v, want %q", text, err, want)
		}
	}
}

// An in-memory store opens at its first use, once however many requests
// ask at the same time: every insert lands in the one database. Before it,
// the store is ready and holds no database; a failed open is tried again.
func TestStoreOpensOnFirstUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := openStore("", 100)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	if st.db.Load() != nil || st.ready(ctx) != nil {
		t.Fatal("the in-memory store was opened at start, or is not ready before its first use")
	}
	var opens atomic.Int32
	open := st.open
	st.open = func() (*sql.DB, error) {
		if opens.Add(1) == 1 {
			return nil, errors.New("the first open fails")
		}
		time.Sleep(20 * time.Millisecond) // the others arrive while it opens
		return open()
	}
	if err := st.insert(ctx, texts, "x"); err == nil || !strings.Contains(err.Error(), "first open fails") {
		t.Fatalf("insert with a failing open: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if err := st.insert(ctx, texts, fmt.Sprint(i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n, err := st.count(ctx, texts); n != 32 || err != nil || opens.Load() != 2 {
		t.Errorf("%d rows (%v) after 32 concurrent first inserts, %d opens; want 32 rows and 2 opens (one failed)", n, err, opens.Load())
	}
}

// The store is real SQLite: the column check fails at 16 characters, a
// failed insert leaves nothing behind, and the cap prunes the oldest rows.
func TestRecordStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := openStore("", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	if err := st.insert(ctx, records, strings.Repeat("😀", 15)); err != nil {
		t.Fatalf("15 characters: %v", err)
	}
	err = st.insert(ctx, records, strings.Repeat("a", 16))
	if err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
		t.Fatalf("16 characters: err = %v, want SQLite's CHECK failure", err)
	}
	if n, _ := st.count(ctx, records); n != 1 {
		t.Fatalf("%d rows after one success and one failure, want 1", n)
	}
	for i := range 12 {
		if err := st.insert(ctx, records, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := st.count(ctx, records); n != 5 {
		t.Fatalf("%d rows with a cap of 5", n)
	}
	// The column has TEXT affinity: SQLite keeps the numbers as text.
	var oldest string
	if err := st.db.Load().QueryRow(`SELECT text FROM records ORDER BY id LIMIT 1`).Scan(&oldest); err != nil || oldest != "7" {
		t.Fatalf("oldest kept value %q (%v), want 7: the oldest must go first", oldest, err)
	}
}

// A configured file keeps its rows across restarts, and it and its WAL are
// readable by their owner alone, whatever the umask.
func TestRecordStoreFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "records.db")
	for range 2 {
		st, err := openStore(path, 100)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.insert(context.Background(), records, "persisted"); err != nil {
			t.Fatal(err)
		}
		if err := st.close(); err != nil {
			t.Fatal(err)
		}
	}
	st, err := openStore(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	if n, _ := st.count(context.Background(), records); n != 2 {
		t.Fatalf("%d rows after two runs, want 2", n)
	}
	for _, f := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi.Mode(), err)
		}
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule string
		env  map[string]string
		want Config
		bad  bool
	}{
		{"defaults", nil, Config{MaxRows: DefaultMaxRows, MaxBodyBytes: 1 << 20, MaxInflightBodyBytes: 16 << 20}, false},
		{"set", map[string]string{"SQLITE_PATH": "/data/x.db", "SQLITE_MAX_ROWS": "50", "MAX_BODY_BYTES": "4096", "MAX_INFLIGHT_BODY_BYTES": "8192"},
			Config{SQLitePath: "/data/x.db", MaxRows: 50, MaxBodyBytes: 4096, MaxInflightBodyBytes: 8192}, false},
		{"a zero cap", map[string]string{"SQLITE_MAX_ROWS": "0"}, Config{}, true},
		{"a word", map[string]string{"MAX_BODY_BYTES": "lots"}, Config{}, true},
		{"a path with a query", map[string]string{"SQLITE_PATH": "/data/x.db?mode=ro"}, Config{}, true},
	}
	for _, tt := range tests {
		var got Config
		s := server.NewSettings("errors-svc", func(k string) string { return tt.env[k] })
		got.Register(s)
		err := s.Parse(nil)
		if tt.bad {
			if err == nil {
				t.Errorf("%s: accepted", tt.rule)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.rule, got, err, tt.want)
		}
	}
}

// A store that cannot write (here SQLite refusing every write, as it does
// for a read-only file) makes the service unready, and its 500s are neither
// counted nor logged as the planted ERR-02, which shows for a 16-character
// text while the store writes; once it writes again, a readiness check finds
// it so. (The end-to-end test fills a real disk.)
func TestStoreThatCannotWrite(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	tel := &observe.Telemetry{Registry: reg, Writer: &logs, JSON: true, Exposure: observe.NewExposureLog()}
	svc, err := New(Config{Telemetry: tel, SQLitePath: filepath.Join(t.TempDir(), "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ctx := context.Background()
	post := func(text string) (int, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, suite.PathColumnSize, strings.NewReader(`{"text":"`+text+`"}`))
		req.Header.Set("Content-Type", "application/json")
		svc.Handler().ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, body := post("sixteen chars!!!"); code != 500 || !strings.Contains(body, "CHECK constraint") {
		t.Fatalf("the planted defect: %d %s", code, body)
	}
	if _, err := svc.store.db.Load().ExecContext(ctx, `PRAGMA query_only = ON`); err != nil {
		t.Fatal(err)
	}
	if code, body := post("short"); code != 500 || !strings.Contains(body, "readonly") {
		t.Fatalf("a write the store refuses: %d %s", code, body)
	}
	if err := svc.Ready(ctx); err == nil || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("ready with a store that cannot write: %v", err)
	}
	_, seen := tel.Exposure.Snapshot()
	if seen["ERR-02"].Count != 1 {
		t.Errorf("ERR-02 counted %d times, want only the 16-character text", seen["ERR-02"].Count)
	}
	if n := testutil.ToFloat64(svc.store.writeFailures); n != 2 { // the insert and the probe
		t.Errorf("showcase_store_write_failures_total %v, want 2", n)
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		failed, planted := strings.Contains(line, `"store":"cannot write"`), strings.Contains(line, `"defect":"ERR-02"`)
		if strings.Contains(line, `"status":500`) && failed == planted {
			t.Errorf("a 500 that is not told apart: %s", line)
		}
	}
	if _, err := svc.store.db.Load().ExecContext(ctx, `PRAGMA query_only = OFF`); err != nil {
		t.Fatal(err)
	}
	if err := svc.Ready(ctx); err != nil {
		t.Errorf("ready once the store writes again: %v", err)
	}
	if code, _ := post("short"); code != 200 {
		t.Errorf("a write after recovery: %d", code)
	}
}

// The bodies being answered share a budget: with room for two bodies of
// the largest size, a third waits until one is done, a chunked body weighs
// the largest size, a body beyond the limit (refused unread) weighs
// nothing, and a client that leaves while waiting is let go.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	svc, err := New(Config{MaxBodyBytes: 1024, MaxInflightBodyBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	inside, release := make(chan struct{}, 8), make(chan struct{})
	h := svc.budgeted(func(w http.ResponseWriter, r *http.Request) {
		inside <- struct{}{}
		<-release
	})
	send := func(size int64) {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.ContentLength = size
		go h(httptest.NewRecorder(), req)
	}
	send(1024)
	send(-1) // chunked: weighs 1024
	<-inside
	<-inside
	send(1024)
	send(1 << 20) // beyond the limit: weighs nothing
	<-inside
	select {
	case <-inside:
		t.Fatal("a third body of the largest size was let in beside two")
	case <-time.After(100 * time.Millisecond):
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx)
	gone.ContentLength = 1024
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { h(rec, gone); close(done) }()
	cancel()
	<-done
	if rec.Code != 499 {
		t.Errorf("a client gone while waiting: %d, want 499 recorded", rec.Code)
	}
	release <- struct{}{} // one of the first two leaves: the waiting one enters
	select {
	case <-inside:
	case <-time.After(2 * time.Second):
		t.Fatal("the waiting body never got in")
	}
	close(release)
}

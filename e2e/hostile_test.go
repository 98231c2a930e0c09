package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// answer is what a raw request got, as the modes must agree on it.
type answer struct {
	status      int
	contentType string
	requestID   string
	shape       string // the JSON body's keys, or the body when not JSON
}

func (a answer) String() string {
	return fmt.Sprintf("%d %s %s (id %q)", a.status, a.contentType, a.shape, a.requestID)
}

// rawAnswer is suite.RawAnswer to base's host, as the modes must agree on it.
func rawAnswer(t *testing.T, base, req string, halfClose bool) answer {
	t.Helper()
	res := suite.RawAnswer(t, strings.TrimPrefix(base, "http://"), req, halfClose)
	return answer{status: res.Status, contentType: res.Header.Get("Content-Type"), requestID: res.Header.Get("X-Request-Id"), shape: suite.Shape(res.Body)}
}

// Hostile input, part 3: requests a hostile client sends, through the real
// binaries, in one process and with the gateway in front of the four
// services; each row of issue 15 that is mended has its case here, and the
// two modes must answer each alike.
func TestHostileInputBothModes(t *testing.T) {
	t.Parallel()
	// Every request's log line: the cases below read the lines of 4xx and
	// 499 answers, which the default (5xx alone) leaves out.
	modes := map[string]deployment{
		"one process": startDeployment(t, false, "LOG_REQUESTS=all"),
		"split":       startDeployment(t, true, "LOG_REQUESTS=all"),
	}
	both := func(t *testing.T, send func(t *testing.T, mode string, d deployment) answer) answer {
		t.Helper()
		got := map[string]answer{}
		for mode, d := range modes {
			got[mode] = send(t, mode, d)
		}
		one, split := got["one process"], got["split"]
		if one.status != split.status || one.contentType != split.contentType || one.shape != split.shape {
			t.Errorf("the modes differ:\n one process %s\n split       %s", one, split)
		}
		return one
	}

	// Row 3: a GET that carries a body still notices its client leaving.
	t.Run("a GET with a body, its client gone", func(t *testing.T) {
		for _, target := range []string{suite.PathUnboundedResultSet, suite.PathInefficientAlgorithm + "?n=100000&searchTerm=1"} {
			for mode, d := range modes {
				id := fmt.Sprintf("gone-%d-%s", len(target), strings.ReplaceAll(mode, " ", "-"))
				conn, err := net.Dial("tcp", strings.TrimPrefix(d.base, "http://"))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: showcase.test\r\nX-Request-Id: %s\r\nContent-Length: 5\r\n\r\nhello", target, id)
				time.Sleep(50 * time.Millisecond)
				conn.Close()
				line := waitLogLine(t, d.servedBy("performance"), id)
				var entry struct {
					Status   int
					Duration time.Duration
				}
				_ = json.Unmarshal([]byte(line), &entry)
				if entry.Status != 499 || entry.Duration > 500*time.Millisecond {
					t.Errorf("%s %s: logged %d after %s, want 499 within milliseconds of the client leaving", mode, target, entry.Status, entry.Duration)
				}
			}
		}
	})

	// The answer key on the gateway's admin port is the same in both
	// modes, whatever codes= a client sends: the key, or 400 in the admin
	// port's error shape, never anything else.
	t.Run("the answer key, asked for anything", func(t *testing.T) {
		for _, c := range []struct {
			query  string
			status int
		}{
			{"", 200}, {"?codes=catalogue", 200}, {"?codes=schema&codes=all", 200}, {"?codes=%00%ff", 400},
			{"?codes=" + strings.Repeat("x", 4000), 400}, {"?codes=%", 400},
		} {
			a := both(t, func(t *testing.T, _ string, d deployment) answer {
				return rawAnswer(t, d.admins[0], "GET /defects/wfc"+c.query+" HTTP/1.1\r\nHost: showcase.test\r\nConnection: close\r\n\r\n", false)
			})
			if a.status != c.status || a.contentType != "application/json" {
				t.Errorf("/defects/wfc%.40s: %s, want %d JSON", c.query, a, c.status)
			}
		}
	})

	// Rows 1 and 4: a body the client breaks (a malformed chunk, a
	// connection half-closed short of its Content-Length) is the client's
	// error: the same answer as the one process, and no upstream failure.
	t.Run("a body the client breaks", func(t *testing.T) {
		for _, c := range []struct {
			req       string
			halfClose bool
			status    int
		}{
			{"GET " + suite.PathMissingField + " HTTP/1.1\r\nHost: showcase.test\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", false, 200},
			{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", false, 400},
			{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nd\r\n{\"text\":\"ok\"}\r\nZZ\r\n", false, 400},
			{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"text\":\"a", true, 400},
			{"GET " + suite.PathUnauthenticatedAccess + " HTTP/1.1\r\nHost: showcase.test\r\nContent-Length: 100\r\n\r\nhello", true, 200},
		} {
			a := both(t, func(t *testing.T, _ string, d deployment) answer { return rawAnswer(t, d.base, c.req, c.halfClose) })
			if a.status != c.status || a.contentType != "application/json" {
				t.Errorf("%q: %s, want %d JSON", c.req, a, c.status)
			}
		}
		metrics := fetchText(t, modes["split"].admins[0]+"/metrics")
		failures := regexp.MustCompile(`(?m)^showcase_gateway_upstream_failures_total\{category="(errors|conformance)",kind="(\w+)"[^}]*\} (\S+)$`)
		for _, m := range failures.FindAllStringSubmatch(metrics, -1) {
			if m[3] != "0" {
				t.Errorf("an upstream failure was counted for the client's broken body: %s", m[0])
			}
		}
	})

	// Row 5: Expect: 100-continue keeps the request ID, and the gateway's
	// metric records the final status.
	t.Run("Expect: 100-continue", func(t *testing.T) {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}
		a := both(t, func(t *testing.T, mode string, d deployment) answer {
			req, _ := http.NewRequest(http.MethodPost, d.base+suite.PathUnicodeEncoding, strings.NewReader(`{"text":"ok"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Expect", "100-continue")
			req.Header.Set("X-Request-Id", "my-trace-123")
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			got := answer{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), requestID: res.Header.Get("X-Request-Id"), shape: suite.Shape(body)}
			if got.requestID != "my-trace-123" {
				t.Errorf("%s: the final answer carries the ID %q, want my-trace-123", mode, got.requestID)
			}
			return got
		})
		if a.status != 200 {
			t.Errorf("%s, want 200", a)
		}
		metrics := fetchText(t, modes["split"].admins[0]+"/metrics")
		if strings.Contains(metrics, `code="100"`) {
			t.Errorf("the gateway's metrics record a 1xx as a status:\n%s", grep(metrics, `code="100"`))
		}
	})

	// Row 6: a client cannot strip the request ID's propagation by naming
	// it in Connection.
	t.Run("Connection: X-Request-Id", func(t *testing.T) {
		both(t, func(t *testing.T, mode string, d deployment) answer {
			id := "trace-abc-" + strings.ReplaceAll(mode, " ", "-")
			a := rawAnswer(t, d.base, "GET "+suite.PathUnauthenticatedAccess+" HTTP/1.1\r\nHost: showcase.test\r\nX-Request-Id: "+id+"\r\nConnection: X-Request-Id\r\n\r\n", false)
			if a.requestID != id {
				t.Errorf("%s: the client got the ID %q, want %q", mode, a.requestID, id)
			}
			waitLogLine(t, d.servedBy("security"), id) // the service logged the same ID
			return a
		})
	})

	// Row 8: what Go's server answers before any handler, identical in both
	// modes and as the README documents.
	t.Run("the standard library's own answers", func(t *testing.T) {
		for _, c := range []struct {
			req    string
			status int
		}{
			{"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: showcase.test\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}", http.StatusNotImplemented},
			{"GET " + suite.PathMissingField + " HTTP/2.0\r\nHost: showcase.test\r\n\r\n", http.StatusHTTPVersionNotSupported},
		} {
			a := both(t, func(t *testing.T, _ string, d deployment) answer { return rawAnswer(t, d.base, c.req, false) })
			if a.status != c.status || !strings.HasPrefix(a.contentType, "text/plain") {
				t.Errorf("%q: %s, want %d text/plain", c.req, a, c.status)
			}
		}
	})
}

// waitLogLine waits up to five seconds for p's log line of the request
// with the given ID, and returns it.
func waitLogLine(t *testing.T, p *process, id string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^.*"requestID":"` + regexp.QuoteMeta(id) + `".*"msg":"request".*$|(?m)^.*"msg":"request".*"requestID":"` + regexp.QuoteMeta(id) + `".*$`)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindString(p.logs.String()); m != "" {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no request log line with the ID %s", id)
	return ""
}

func fetchText(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func grep(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Row 9: a disk that cannot take another byte (the file-size limit of the
// process serving endpoint 3, ulimit -f) makes that process unready, its
// 500s are told apart from the planted ERR-02 in the log and the metrics,
// and both modes answer alike.
func TestFullDiskBothModes(t *testing.T) {
	t.Parallel()
	wrap := func(bin string) string {
		script := filepath.Join(t.TempDir(), "limited")
		if err := os.WriteFile(script, []byte("#!/bin/sh\nulimit -f 200\nexec \""+bin+"\" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return script
	}
	answers := map[string]answer{}
	for _, split := range []bool{false, true} {
		db := "SQLITE_PATH=" + filepath.Join(t.TempDir(), "records.db")
		var base string
		var limited *process
		if split {
			var ups []string
			for _, c := range catalogue.Categories {
				bin := buildBinary(t, modulePath+c.Name+"-svc/cmd/"+c.Name+"-svc")
				if c.Name == "errors" {
					bin = wrap(bin)
				}
				p := startProcess(t, bin, db)
				if c.Name == "errors" {
					limited = p
				}
				ups = append(ups, c.Upstream+"="+p.base)
			}
			base = startProcess(t, buildGateway(t), ups...).base
		} else {
			limited = startProcess(t, wrap(buildGateway(t)), db)
			base = limited.base
		}
		client := &http.Client{Timeout: 10 * time.Second}
		post := func(text, id string) answer {
			req, _ := http.NewRequest(http.MethodPost, base+suite.PathColumnSize, strings.NewReader(`{"text":"`+text+`"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Request-Id", id)
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return answer{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), shape: suite.Shape(body) + " " + string(body)}
		}
		var full answer
		for i := 0; i < 2000; i++ {
			if a := post("fifteen chars!!", fmt.Sprintf("fill-%d", i)); a.status != 200 {
				full = a
				break
			}
		}
		if full.status != 500 || !strings.Contains(full.shape, "disk I/O error") {
			t.Fatalf("split %v: filling the disk ended with %s", split, full)
		}
		if res, err := http.Get(limited.admin + "/readyz"); err != nil || res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("split %v: /readyz with a full disk: %v %v, want 503", split, res, err)
		}
		planted := post("sixteen chars!!!", "planted-"+fmt.Sprint(split))
		if planted.status != 500 || !strings.Contains(planted.shape, "CHECK constraint") {
			t.Errorf("split %v: the planted defect with a full disk: %s", split, planted)
		}
		logs := limited.logs.String()
		if !strings.Contains(waitLogLine(t, limited, "planted-"+fmt.Sprint(split)), `"defect":"ERR-02"`) {
			t.Errorf("split %v: the planted 500 is not logged as ERR-02", split)
		}
		if !regexp.MustCompile(`"store":"cannot write"`).MatchString(logs) || !strings.Contains(fetchText(t, limited.admin+"/metrics"), "showcase_store_write_failures_total{service=\"errors-svc\"} ") {
			t.Errorf("split %v: the failed writes are not told apart in the log and the metrics", split)
		}
		full.shape = suite.Shape([]byte(full.shape[strings.Index(full.shape, " ")+1:]))
		answers[fmt.Sprint(split)] = full
	}
	if answers["false"] != answers["true"] {
		t.Errorf("the modes differ: one process %s, split %s", answers["false"], answers["true"])
	}
}

package e2e_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/suite"
)

// floodMix is valid and malformed requests over every endpoint, at sizes
// that keep a flood fast (the slow sizes have their own tests).
var floodMix = []sent{
	{"GET", suite.PathMissingField, "", 8},
	{"GET", suite.PathUnauthenticatedAccess, "", 4},
	{"GET", suite.PathMalformedJSON, "", 2},
	{"GET", suite.PathIncorrectContentType + "?item_id=error", "", 2},
	{"GET", suite.PathUndocumentedStatus + "?id=0", "", 2},
	{"GET", suite.PathUndocumentedStatus + "?id=%ZZ;x", "", 2},
	{"GET", suite.PathUndocumentedStatus, "", 1},
	{"POST", suite.PathInputTypeHandling, `{"number":"79927398713"}`, 3},
	{"POST", suite.PathInputTypeHandling, `{"number":"7992a"}`, 2},
	{"POST", suite.PathInputTypeHandling, `{"number":[1,{"a":null}]}`, 1},
	{"POST", suite.PathInputTypeHandling, `{"number":`, 1},
	{"POST", suite.PathColumnSize, `{"text":"short"}`, 3},
	{"POST", suite.PathColumnSize, `{"text":"0123456789abcdefghij"}`, 2},
	{"POST", suite.PathColumnSize, `["text"]`, 1},
	{"POST", suite.PathUnicodeEncoding, `{"text":"ascii"}`, 2},
	{"POST", suite.PathUnicodeEncoding, `{"text":"ünïcödé"}`, 2},
	{"POST", suite.PathUnicodeEncoding, "\xff\xfe", 1},
	{"GET", suite.PathUnboundedResultSet + "?limit=3", "", 2},
	{"GET", suite.PathUnboundedResultSet + "?limit=-5", "", 1},
	{"GET", suite.PathInefficientAlgorithm + "?n=500&searchTerm=144", "", 2},
	{"GET", suite.PathInefficientAlgorithm + "?n=x&searchTerm=1", "", 1},
	{"GET", suite.PathInefficientAlgorithm + "?n=100001&searchTerm=1", "", 1},
	{"DELETE", suite.PathMissingField, "", 1},
	{"BREW", "/no/such/path", "", 1},
	{"GET", "/security/../performance/unbounded-result-set", "", 1},
	{"OPTIONS", suite.PathColumnSize, "", 1},
	{"HEAD", suite.PathMissingField, "", 1},
}

// flood sends total requests of mix, n at a time, checks each answer
// against the specified outcomes, and counts connection errors and
// unspecified answers.
func flood(t *testing.T, base string, mix []sent, total, n int, check func(s sent, status int, h http.Header, body []byte) error) (connErrs, bad int64) {
	var weighted []sent
	for _, s := range mix {
		for range s.times {
			weighted = append(weighted, s)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}, Timeout: 30 * time.Second}
	var next atomic.Int64
	var wg sync.WaitGroup
	var reported atomic.Int64
	for range n {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(total) {
					return
				}
				s := weighted[i%int64(len(weighted))]
				req, _ := http.NewRequest(s.method, base+s.target, strings.NewReader(s.body))
				if s.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := client.Do(req)
				if err != nil {
					if connErrs := atomic.AddInt64(&connErrs, 1); connErrs <= 3 {
						t.Errorf("connection error: %v", err)
					}
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					err = check(s, resp.StatusCode, resp.Header, body)
				}
				if err != nil {
					atomic.AddInt64(&bad, 1)
					if reported.Add(1) <= 5 {
						t.Errorf("%s %s → %d %s: %v", s.method, s.target, resp.StatusCode, suite.Excerpt(body), err)
					}
				}
			}
		})
	}
	wg.Wait()
	return connErrs, bad
}

func outcomeOf(s sent, status int, h http.Header, body []byte) error {
	if s.method == http.MethodHead {
		body = bytes.TrimSpace(body)
	}
	return suite.Outcome(s.method, s.target, status, h, body)
}

// rssMB is a process's resident memory.
func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), &kb)
			return kb / 1024
		}
	}
	return -1
}

// 100,000 mixed requests, valid and malformed, through the gateway in front
// of the four services at 64 connections: no connection error, no answer
// outside the specified outcomes, and every process's memory stays bounded.
func TestFlood(t *testing.T) {
	t.Parallel()
	sp := startSplitProcesses(t)
	start := time.Now()
	connErrs, bad := flood(t, sp.gateway.base, floodMix, 100_000, 64, outcomeOf)
	took := time.Since(start)
	if connErrs != 0 || bad != 0 {
		t.Fatalf("%d connection errors, %d answers outside the specified outcomes", connErrs, bad)
	}
	var report []string
	for name, p := range map[string]*process{"gateway": sp.gateway, "security": sp.services["security"], "errors": sp.services["errors"],
		"conformance": sp.services["conformance"], "performance": sp.services["performance"]} {
		rss := rssMB(p.cmd.Process.Pid)
		report = append(report, fmt.Sprintf("%s %.1f MB", name, rss))
		if rss > 100 {
			t.Errorf("%s holds %.1f MB after the flood", name, rss)
		}
	}
	t.Logf("100,000 requests in %s (%.0f/s), resident memory: %s", took.Round(time.Millisecond), 100_000/took.Seconds(), strings.Join(report, ", "))
}

// Killing one service under load fails only its category, with 502 JSON;
// the other categories see no error; a restarted service is found again by
// the gateway on its own.
func TestKillServiceUnderLoad(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	confAddr := ln.Addr().String()
	ln.Close()
	confBin := buildBinary(t, modulePath+"conformance-svc/cmd/conformance-svc")
	conf := startProcessAt(t, confBin, confAddr)
	var env []string
	for _, c := range []struct{ env, svc string }{{"UPSTREAM_SECURITY", "security-svc"}, {"UPSTREAM_ERRORS", "errors-svc"}, {"UPSTREAM_PERFORMANCE", "performance-svc"}} {
		env = append(env, c.env+"="+startProcess(t, buildBinary(t, modulePath+c.svc+"/cmd/"+c.svc)).base)
	}
	gw := startProcess(t, buildGateway(t), append(env, "UPSTREAM_CONFORMANCE=http://"+confAddr)...)

	var phase atomic.Int32 // 0 up, 1 killed, 2 restarted
	var otherErrs, confOK, conf502 atomic.Int64
	check := func(s sent, status int, h http.Header, body []byte) error {
		if strings.HasPrefix(s.target, "/response-conformance/") && status == http.StatusBadGateway {
			if h.Get("Content-Type") != "application/json" || (s.method != http.MethodHead && !bytes.Contains(body, []byte(`"error"`))) {
				return fmt.Errorf("a 502 that is not JSON")
			}
			conf502.Add(1)
			return nil
		}
		err := outcomeOf(s, status, h, body)
		if err != nil && !strings.HasPrefix(s.target, "/response-conformance/") {
			otherErrs.Add(1)
		}
		if err == nil && strings.HasPrefix(s.target, "/response-conformance/") && phase.Load() == 2 {
			confOK.Add(1)
		}
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		connErrs, bad := flood(t, gw.base, floodMix, 30_000, 16, check)
		if connErrs != 0 || bad != 0 {
			t.Errorf("%d connection errors, %d unspecified answers", connErrs, bad)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	if err := conf.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-conf.exited
	phase.Store(1)
	time.Sleep(500 * time.Millisecond)
	startProcessAt(t, confBin, confAddr)
	phase.Store(2)
	<-done
	if otherErrs.Load() != 0 {
		t.Fatalf("%d errors in the categories that were not killed", otherErrs.Load())
	}
	if conf502.Load() == 0 || confOK.Load() == 0 {
		t.Fatalf("conformance: %d 502s while down, %d good answers after the restart; want both", conf502.Load(), confOK.Load())
	}
	t.Logf("conformance answered 502 JSON %d times while down, and %d times correctly after its restart", conf502.Load(), confOK.Load())
}

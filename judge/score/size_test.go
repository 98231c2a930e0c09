package score_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

// synthetic writes a report of n results in a format, each on one of the
// ten operations (so the findings stay ten): nuclei's SARIF (its tool after
// its results), nuclei's JSON Lines, APIFuzzer's JUnit and the plain JSON
// list. bad puts a result the reader must refuse first.
func synthetic(format string, n int, bad bool) []byte {
	var b bytes.Buffer
	b.Grow(n * 400)
	op := func(i int) catalogue.Endpoint { return catalogue.Endpoints[i%len(catalogue.Endpoints)] }
	switch format {
	case "sarif":
		b.WriteString("{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"runs\": [\n    {\n      \"results\": [\n")
		for i := range n {
			uri := strings.TrimPrefix(op(i).Path, "/")
			if bad && i == 0 {
				uri = "::" // no operation
			}
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, `        {"kind": "open", "level": "error", "locations": [{"physicalLocation": {"artifactLocation": {"uri": %q, "uriBaseId": "%%SRCROOT%%"}}}], "message": {"text": "Time-Based Blind SQL Injection (time-based-sqli) found on 127.0.0.1, result %d"}, "ruleId": "time-based-sqli"}`, uri, i)
		}
		b.WriteString("\n      ],\n      \"tool\": {\"driver\": {\"name\": \"Nuclei\", \"semanticVersion\": \"v3.11.1\", \"rules\": [{\"id\": \"time-based-sqli\"}]}}\n    }\n  ],\n  \"version\": \"2.1.0\"\n}\n")
	case "nuclei-jsonl":
		for i := range n {
			id := `"template-id":"time-based-sqli",`
			if bad && i == 0 {
				id = ""
			}
			e := op(i)
			fmt.Fprintf(&b, `{%s"info":{"name":"Time-Based Blind SQL Injection","severity":"critical","tags":["sqli"]},"type":"http","matched-at":"http://127.0.0.1:8080%s?i=%d","request":"%s %s HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n","timestamp":"2026-11-23T23:27:02Z"}`+"\n", id, e.Path, i, e.Method, e.Path)
		}
	case "junit":
		fmt.Fprintf(&b, "<?xml version=\"1.0\" ?>\n<testsuites>\n\t<testsuite name=\"API Fuzzer\" tests=\"%d\">\n", n)
		for i := range n {
			e := op(i)
			if bad && i == 0 {
				b.WriteString("\t\t<testcase name=\"nothing\"><failure message=\"no\"/></testcase>\n")
				continue
			}
			msg := fmt.Sprintf(`{"status": "failed", "name": "%d", "request_url": "http://127.0.0.1:8080%s", "request_method": "%s", "request_headers": "{\"User-Agent\": \"APIFuzzer 0.9.13\"}", "request_body": {"number": "%d"}, "parsed_status_code": 500, "reason": "failed"}`, i, e.Path, e.Method, i)
			fmt.Fprintf(&b, "\t\t<testcase name=\"%d: http://127.0.0.1:8080%s\" status=\"failed\">\n\t\t\t<failure type=\"failure\" message=\"%s\"/>\n\t\t</testcase>\n", i, e.Path, strings.ReplaceAll(msg, `"`, "&quot;"))
		}
		b.WriteString("\t</testsuite>\n</testsuites>\n")
	case "json":
		b.WriteString("[\n")
		for i := range n {
			class := "server-error"
			if bad && i == 0 {
				class = "crashed"
			}
			if i > 0 {
				b.WriteString(",\n")
			}
			e := op(i)
			fmt.Fprintf(&b, `  {"method": %q, "path": "http://127.0.0.1:8080%s?i=%d", "class": %q, "detail": "result %d of a converted report"}`, e.Method, e.Path, i, class, i)
		}
		b.WriteString("\n]\n")
	}
	return b.Bytes()
}

// heapPeak samples the live heap while f runs and returns its highest
// value above what was live before.
func heapPeak(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// BenchmarkReadGrowing reads reports of 10,000 to 160,000 results in each
// format the tools write in bulk and prints, per size, the time per result
// and the peak heap, each as a ratio to the smallest report's in the same
// run: a reader whose cost grows with the square of the report shows a
// time ratio near 16 at the largest, a linear one near 1; the heap of a
// streaming reader stays what it was at the smallest. Refusing a report at
// its first result must cost a small part of reading it whole. It fails
// where a ratio is off by far more than this machine's noise.
func BenchmarkReadGrowing(b *testing.B) {
	sizes := []int{10_000, 20_000, 40_000, 80_000, 160_000}
	fmt.Printf("\n%-13s %8s %9s %9s %12s %7s %10s %12s\n", "format", "results", "MB", "ms", "µs/result", "×first", "peak MB", "peak/size")
	for _, format := range []string{"sarif", "nuclei-jsonl", "junit", "json"} {
		var first float64
		var firstPeak uint64
		for _, n := range sizes {
			data := synthetic(format, n, false)
			// Read from a file, as the command does: the report held in
			// memory would count in the heap the collector paces itself by.
			file := filepath.Join(b.TempDir(), "report")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				b.Fatal(err)
			}
			size := len(data)
			data = nil
			var elapsed time.Duration
			var rep score.Report
			peak := heapPeak(func() {
				start := time.Now()
				var err error
				rep, err = score.ReadFile(file, score.Options{})
				elapsed = time.Since(start)
				if err != nil {
					b.Fatalf("%s %d: %v", format, n, err)
				}
			})
			if total := rep.Findings[0].Count * len(rep.Findings); len(rep.Findings) != 10 || total != n {
				b.Fatalf("%s %d: %d findings, %d results", format, n, len(rep.Findings), total)
			}
			perResult := float64(elapsed.Microseconds()) / float64(n)
			if first == 0 {
				first, firstPeak = perResult, max(peak, 1)
			}
			ratio := perResult / first
			peakRatio := float64(peak) / float64(size)
			fmt.Printf("%-13s %8d %9.1f %9.0f %12.2f %7.2f %10.1f %12.2f\n", format, n, float64(size)/1e6, float64(elapsed.Milliseconds()), perResult, ratio, float64(peak)/1e6, peakRatio)
			if ratio > 3 {
				b.Errorf("%s: %d results cost %.1f× per result what 10,000 did: not linear", format, n, ratio)
			}
			if peakRatio > 3 && peak > 2*firstPeak {
				b.Errorf("%s: %d results held %.1f× the report's size, %.1f× what 10,000 did", format, n, peakRatio, float64(peak)/float64(firstPeak))
			}
		}
		// Refused at the first result: what was read up to it, not the whole.
		n := sizes[len(sizes)-1]
		good, bad := synthetic(format, n, false), synthetic(format, n, true)
		start := time.Now()
		if _, err := score.Read("r", bytes.NewReader(good), score.Options{}); err != nil {
			b.Fatal(err)
		}
		whole := time.Since(start)
		start = time.Now()
		if _, err := score.Read("r", bytes.NewReader(bad), score.Options{}); err == nil {
			b.Fatalf("%s: a bad first result was not refused", format)
		}
		refused := time.Since(start)
		fmt.Printf("%-13s refused at its first result of %d: %.2f ms, %.4f× reading it whole\n", format, n, float64(refused.Microseconds())/1000, float64(refused)/float64(whole))
		if refused > whole/10 {
			b.Errorf("%s: refusing at the first result cost %v of %v", format, refused, whole)
		}
	}
	for b.Loop() {
	}
}

// Command slowclaims is a small tool for the trials' tests that claims a
// slow response on every answer it gets, whatever it took: it sends the
// performance operations requests that cannot trigger their defects
// (PERF-01 with a limit below 100, PERF-02 with a small n) and reports each
// answer as slow-response in the scorer's plain CSV, with the time it got
// it. No such claim may count as a detection.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	base := flag.String("base", "http://localhost:8080", "the instance's base URL")
	out := flag.String("out", "report.csv", "the report to write")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowclaims:", err)
		os.Exit(2)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"method", "path", "class", "detail", "time"})
	client := &http.Client{Timeout: 30 * time.Second}
	for _, target := range []string{
		"/performance/unbounded-result-set?limit=50",
		"/performance/inefficient-algorithm?n=20&searchTerm=5",
		"/performance/unbounded-result-set?limit=99",
		"/performance/inefficient-algorithm?n=1000&searchTerm=5",
	} {
		start := time.Now()
		res, err := client.Get(*base + target)
		if err != nil {
			fmt.Fprintln(os.Stderr, "slowclaims:", err)
			os.Exit(2)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		took := time.Since(start)
		path, _, _ := strings.Cut(target, "?")
		_ = w.Write([]string{http.MethodGet, path, "slow-response", fmt.Sprintf("%d after %s, claimed slow", res.StatusCode, took.Round(time.Millisecond)), time.Now().UTC().Format(time.RFC3339Nano)})
		w.Flush()
	}
	if err := w.Error(); err != nil || f.Close() != nil {
		fmt.Fprintln(os.Stderr, "slowclaims: writing the report:", err)
		os.Exit(2)
	}
}

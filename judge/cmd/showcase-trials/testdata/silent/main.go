// Command silent is a small tool for the trials' tests that sends every
// trigger of the instance's mutant set and reports nothing: each mutant
// it meets is triggered and, its report empty, survives as "triggered,
// not reported". It writes the scorer's plain CSV with its header alone.
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

func main() {
	base := flag.String("base", "http://localhost:8080", "the instance's base URL")
	defects := flag.String("defects", "", "the instance's mutant set, mutants:SEED:N")
	out := flag.String("out", "report.csv", "the report to write")
	flag.Parse()
	set, err := catalogue.Parse(*defects)
	if err != nil || !set.IsMutants() {
		fmt.Fprintf(os.Stderr, "silent: -defects %q: want a mutant set (%v)\n", *defects, err)
		os.Exit(2)
	}
	// Each mutant's triggers as the ground truth gives them: what to send.
	client := &http.Client{Timeout: 30 * time.Second}
	for _, d := range catalogue.GroundTruth(set).Defects {
		if !d.Active {
			continue
		}
		for _, tr := range d.Triggers {
			req, err := http.NewRequest(tr.Method, *base+tr.Target, strings.NewReader(tr.Body))
			if err != nil {
				fmt.Fprintln(os.Stderr, "silent:", err)
				os.Exit(1)
			}
			if tr.ContentType != "" {
				req.Header.Set("Content-Type", tr.ContentType)
			}
			for k, v := range tr.Headers {
				req.Header.Set(k, v)
			}
			res, err := client.Do(req)
			if err != nil {
				fmt.Fprintln(os.Stderr, "silent:", err)
				os.Exit(1)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "silent:", err)
		os.Exit(2)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"method", "path", "class", "detail", "time"})
	w.Flush()
	if err := errors.Join(w.Error(), f.Close()); err != nil {
		fmt.Fprintln(os.Stderr, "silent:", err)
		os.Exit(1)
	}
}

// Command showcase-dashboard draws the panels of the Grafana dashboard
// (deploy/grafana/showcase-dashboard.json) from a Prometheus's answers
// over the last -since, as one PNG: the dashboard's picture without
// Grafana.
//
//	showcase-dashboard -prometheus http://127.0.0.1:9099 -since 5m -o dashboard.png
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/defectshowcase/showcase/platform/version"
	"github.com/defectshowcase/showcase/tools/dashboard"
	"gonum.org/v1/plot/vg"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "showcase-dashboard:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("showcase-dashboard", flag.ContinueOnError)
	prom := fs.String("prometheus", "http://127.0.0.1:9090", "the Prometheus to ask")
	file := fs.String("dashboard", "deploy/grafana/showcase-dashboard.json", "the Grafana dashboard whose panels to draw")
	since := fs.Duration("since", 5*time.Minute, "the time range, up to now")
	step := fs.Duration("step", 5*time.Second, "the resolution")
	rate := fs.Duration("rate-interval", 20*time.Second, "what Grafana's $__rate_interval stands for (4 scrape intervals)")
	cols := fs.Int("cols", 2, "panels a row")
	row := fs.String("row", "", "the dashboard's row to draw: \"\" the panels above the first row (the service's), Campaign a run of trials'")
	out := fs.String("o", "dashboard.png", "the PNG to write")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, "showcase-dashboard", version.String())
		return err
	}
	all, err := dashboard.Load(*file)
	if err != nil {
		return err
	}
	panels := dashboard.InRow(all, *row)
	if len(panels) == 0 {
		return fmt.Errorf("%s: no row %q", *file, *row)
	}
	end := time.Now()
	r := dashboard.Range{Start: end.Add(-*since), End: end, Step: *step, RateInterval: *rate}
	if err := dashboard.Ask(ctx, &http.Client{Timeout: time.Minute}, *prom, panels, r); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := dashboard.Draw(f, panels, *cols, 8*vg.Inch, 4*vg.Inch); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range panels {
		fmt.Fprintf(stdout, "%-45s %d series\n", p.Title, len(p.Series))
	}
	return nil
}

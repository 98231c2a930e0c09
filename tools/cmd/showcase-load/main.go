// Command showcase-load is the showcase's load test: the mix of
// tools/load (the ten endpoints, bad input and unknown paths, by weight)
// sent at -rate requests per second for -duration against -base, at a
// constant arrival rate, with vegeta's library. It prints progress at
// least once a second, then a report per kind of request, and exits 1,
// naming the kind and the answer, when any answer is one the
// specification does not allow or any request got no answer.
//
//	showcase-load -base http://localhost:8080 -rate 50 -duration 5m -out out/load
//	vegeta report out/load/results.bin      # the raw results, for vegeta's own reports and plots
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/platform/version"
	"github.com/defectshowcase/showcase/tools/load"
)

// errFailed is a run whose answers were not all as specified.
var errFailed = errors.New("not every answer was as specified")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errFailed):
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "showcase-load:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("showcase-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "http://localhost:8080", "the service's base URL")
	rate := fs.Float64("rate", 20, "requests per second, arriving at a constant rate")
	duration := fs.Duration("duration", time.Minute, "how long to send")
	seed := fs.Uint64("seed", 1, "the random source of the mix and the sizes")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for one answer")
	out := fs.String("out", "", "a directory for results.bin (vegeta's format) and report.json")
	quiet := fs.Bool("quiet", false, "no progress lines")
	only := fs.String("only", "", "send only these kinds of the mix, comma-separated (missing-field,unknown path)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, "showcase-load", version.String())
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o := load.Options{Base: *base, Rate: *rate, Duration: *duration, Seed: *seed, Timeout: *timeout, Out: *out}
	if *only != "" {
		kinds, err := load.Only(strings.Split(*only, ","))
		if err != nil {
			return err
		}
		o.Kinds = kinds
	}
	if !*quiet {
		o.Progress = stderr
	}
	fmt.Fprintf(stderr, "showcase-load: %g requests/s for %s against %s\n", *rate, *duration, *base)
	r, err := load.Run(ctx, o)
	if err != nil {
		return err
	}
	r.WriteText(stdout)
	if r.Failed() {
		fmt.Fprintf(stderr, "showcase-load: FAILED: %s\n", r.Unexpected[0])
		return errFailed
	}
	return nil
}

// Command showcase-agent runs a tool's trial inside its Pod, when
// showcase-trials runs a campaign on Kubernetes. An init container copies
// it into a volume the tool's container shares (install), and the tool's
// container runs the tool through it (run): within the trial's budget,
// stopped at it by SIGINT, then SIGTERM, then SIGKILL, as on the runner's
// own machine; then it takes the instance's ground truth from the sidecar
// over the Pod's loopback and writes the trial's folder to its standard
// output, where the runner reads it from the container's log.
//
//	showcase-agent install DIR
//	showcase-agent run [-dir /trial] [-admin URL] [-budget D] [-interrupt-grace D] [-term-grace D] -- COMMAND...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/platform/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signalled := ctx.Err() != nil
	stop()
	switch {
	case err == nil && signalled:
		os.Exit(agent.ExitStopped) // the folder is written; the trial was cut short
	case err == nil, errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, "showcase-agent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: showcase-agent install DIR | run [flags] -- COMMAND")
	}
	switch args[0] {
	case "install":
		if len(args) != 2 {
			return errors.New("usage: showcase-agent install DIR")
		}
		return install(args[1])
	case "run":
	case "-version", "--version":
		_, err := fmt.Fprintln(stdout, "showcase-agent", version.String())
		return err
	default:
		return fmt.Errorf("%q: showcase-agent install or run", args[0])
	}
	o := agent.Options{Version: version.String()}
	fs := flag.NewFlagSet("showcase-agent run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Dir, "dir", "/trial", "the trial's folder; the tool's is DIR/out")
	fs.StringVar(&o.Admin, "admin", "http://127.0.0.1:9090", "the instance's admin URL")
	fs.DurationVar(&o.Limits.Budget, "budget", 10*time.Minute, "the trial's budget")
	fs.DurationVar(&o.Limits.InterruptGrace, "interrupt-grace", 10*time.Second, "after SIGINT, before SIGTERM")
	fs.DurationVar(&o.Limits.TermGrace, "term-grace", 5*time.Second, "after SIGTERM, before SIGKILL")
	coverageKind := fs.String("coverage", "", "record the instance's coverage while the tool runs: api, or code (an instance built with COVER=1)")
	fs.DurationVar(&o.Coverage.Every, "coverage-every", trials.DefaultCoverageEvery, "how often to sample the coverage")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var err error
	if o.Coverage.Kind, err = trials.ParseCoverageKind(*coverageKind); err != nil {
		return err
	}
	o.Command = fs.Args()
	if len(o.Command) == 0 {
		return errors.New("run: no command after --")
	}
	return agent.Run(ctx, o, stdout)
}

// install copies this program into dir, executable by anyone: the tool's
// image may run as any user.
func install(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, "showcase-agent"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// Command showcase-truth writes the ground truth of the showcase as JSON:
// every planted defect, its operation, symptom, trigger requests with their
// answers, the classes of check that detect it, its faces, its CWE, and
// whether it is active under the given setting. It is what the gateway
// serves on its admin port at /defects, without running an instance.
//
//	go run ./judge/cmd/showcase-truth                 # DEFECTS=all
//	go run ./judge/cmd/showcase-truth -defects none -o truth-none.json
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/version"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "showcase-truth:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("showcase-truth", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var active catalogue.Set
	fs.TextVar(&active, "defects", catalogue.All(), catalogue.SettingUsage)
	out := fs.String("o", "", "write to this file instead of standard output")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, "showcase-truth", version.String())
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	b, err := json.MarshalIndent(catalogue.GroundTruth(active), "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *out == "" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

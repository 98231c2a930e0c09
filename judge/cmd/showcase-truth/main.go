// Command showcase-truth writes the ground truth of the showcase as JSON:
// every planted defect, its operation, symptom, trigger requests with their
// answers, the classes of check that detect it, its faces, its CWE, and
// whether it is active under the given setting. It is what the gateway
// serves on its admin port at /defects, without running an instance.
//
// With -format wfc it writes the answer key instead: the planted faults as
// the Web Fuzzing Commons report of a tool that found them all, valid
// against WFC's published schema (the admin port's /defects/wfc); -codes
// catalogue writes F207 and F209 too, which that schema's code ranges
// leave out.
//
//	go run ./judge/cmd/showcase-truth                 # DEFECTS=all
//	go run ./judge/cmd/showcase-truth -defects none -o truth-none.json
//	go run ./judge/cmd/showcase-truth -format wfc -o answer-key.json
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/wfc"
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
	format := fs.String("format", "truth", "truth (the ground truth, as /defects) or wfc (the answer key as a WFC report, as /defects/wfc)")
	codes := fs.String("codes", "schema", "with -format wfc: schema (valid against WFC's published schema) or catalogue (F207 and F209 too, as WFC's catalogue has them)")
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
	var v any = catalogue.GroundTruth(active)
	switch {
	case *format == "wfc" && (*codes == "schema" || *codes == "catalogue"):
		v = wfc.AnswerKey(active, wfc.Options{Version: version.String(), Created: time.Now(), CatalogueCodes: *codes == "catalogue"})
	case *format == "wfc":
		return fmt.Errorf("-codes %q: want schema or catalogue", *codes)
	case *format != "truth":
		return fmt.Errorf("-format %q: want truth or wfc", *format)
	case *codes != "schema":
		return errors.New("-codes is for -format wfc")
	}
	b, err := json.MarshalIndent(v, "", "  ")
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

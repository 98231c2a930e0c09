// Command showcase-score scores the report of an API-testing tool run
// against the showcase: which planted defects it reported, which its
// traffic reached without its noticing, what it reported that is not
// planted, and, given the same tool's report against DEFECTS=none, its false
// positives, with true and false positive rates and Youden's J per
// category.
//
//	showcase-score report.ndjson                          # every defect was active
//	showcase-score -exposure http://localhost:9090/defects report.ndjson
//	showcase-score -baseline none/junit.xml -format svg -o card.svg all/junit.xml
//
// It reads Schemathesis 4 ndjson (gzipped or not), JUnit XML, SARIF 2.1.0,
// and a CSV or JSON list of method,path,class. A report it cannot read is
// refused naming the file and line, with exit status 2; nothing is scored.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/tools/score"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	var usage usageError
	var input *score.InputError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &usage), errors.As(err, &input):
		fmt.Fprintln(os.Stderr, "showcase-score:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "showcase-score:", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("showcase-score", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: showcase-score [flags] REPORT\n\nREPORT: Schemathesis 4 ndjson (.gz too), JUnit XML, SARIF 2.1.0, or CSV/JSON of method,path,class")
		fs.PrintDefaults()
	}
	var active catalogue.Set
	fs.TextVar(&active, "defects", catalogue.All(), "the defects active in the instance the tool ran against: "+catalogue.SettingUsage)
	exposure := fs.String("exposure", "", "the instance's admin /defects, as a URL (http://localhost:9090/defects) or a saved file: its active defects and how often each was triggered")
	baseline := fs.String("baseline", "", "a report of the same tool against an instance with DEFECTS=none: its every finding is a false positive")
	format := fs.String("format", "text", "output: "+strings.Join(score.Formats, ", "))
	out := fs.String("o", "", "write to this file instead of standard output")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() != 1 {
		return usageError{errors.New("want one report; -h for usage")}
	}
	if !contains(score.Formats, *format) {
		return usageError{fmt.Errorf("-format %q: want one of %s", *format, strings.Join(score.Formats, ", "))}
	}
	defectsSet := false
	fs.Visit(func(f *flag.Flag) { defectsSet = defectsSet || f.Name == "defects" })
	if defectsSet && *exposure != "" {
		return usageError{errors.New("give -defects or -exposure, not both: the exposure names the active defects")}
	}

	inst := score.Instance{Active: active}
	if *exposure != "" {
		var err error
		if inst, err = readExposure(*exposure); err != nil {
			return err
		}
	}
	rep, err := score.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	var base *score.Report
	if *baseline != "" {
		b, err := score.ReadFile(*baseline)
		if err != nil {
			return err
		}
		base = &b
	}
	var buf bytes.Buffer
	if err := score.Score(rep, inst, base).Write(&buf, *format); err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(*out, buf.Bytes(), 0o644)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readExposure reads an instance's ground truth with its exposure, from its
// admin URL or a file.
func readExposure(where string) (score.Instance, error) {
	var data []byte
	if strings.HasPrefix(where, "http://") || strings.HasPrefix(where, "https://") {
		client := &http.Client{Timeout: 10 * time.Second}
		res, err := client.Get(where)
		if err != nil {
			return score.Instance{}, fmt.Errorf("-exposure: %w", err)
		}
		defer res.Body.Close()
		data, err = io.ReadAll(io.LimitReader(res.Body, 16<<20))
		if err != nil {
			return score.Instance{}, fmt.Errorf("-exposure: %w", err)
		}
		if res.StatusCode != http.StatusOK {
			return score.Instance{}, fmt.Errorf("-exposure: %s answered %s", where, res.Status)
		}
	} else {
		var err error
		if data, err = os.ReadFile(where); err != nil {
			return score.Instance{}, fmt.Errorf("-exposure: %w", err)
		}
	}
	return score.ParseExposure(where, data)
}

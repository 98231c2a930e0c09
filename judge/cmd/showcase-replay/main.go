// Command showcase-replay is the reference tool of the trials: it replays
// the catalogue's trigger requests against an instance, in the
// catalogue's order, and checks each answer against the contract the
// instance serves, the way a contract-testing tool would: a 5xx is a
// server error; a status the operation does not declare, an undocumented
// status; a content type it does not declare, a wrong content type; a
// JSON body that does not parse or lacks a required property, an invalid
// body; a 2xx without the credential the operation requires, an
// authentication bypass; an answer that took a second or more, a slow
// response. It writes what it finds as the plain report the scorer reads,
// a row per finding with the time it saw it, as it goes (a run stopped
// early keeps what it found); with -format wfc, as a Web Fuzzing Commons
// report (report.json), rewritten whole after each answer: its findings
// under WFC's codes, a slow answer, which WFC has no code for, as a
// warning, and no times, which WFC has no place for.
//
//	showcase-replay -base http://localhost:8080 -out report.csv           # every trigger, in order
//	showcase-replay -base http://localhost:8080 -out report.csv -weak -seed 3
//	showcase-replay -base http://localhost:8080 -format wfc -out report.json
//	showcase-replay -base http://localhost:8080 -defects mutants:7 -out report.csv
//
// With -defects mutants:SEED[:N] it replays the triggers of the mutant set
// the instance was started with, derived from the setting by the same code
// that makes the ground truth (it is an oracle by design; a trial passes
// it the instance's setting as {defects}). It then also knows, as a
// schema-aware generator does, which of its requests the contract allows:
// a 2xx to one it forbids is an accepted invalid request, a 400 to one it
// allows a rejected valid one, and a 2xx to one without the right key an
// authentication bypass.
//
// With -weak it is a deliberately weak tool: seeded by -seed, it sends
// each defect's triggers only with probability -p (default 0.5), in a
// shuffled order, after a random pause of up to -pause: it finds a varying
// subset, at varying times. It exists so that the trials and their
// statistics can be shown without any outside tool.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"mime"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/platform/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "showcase-replay:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("showcase-replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "http://localhost:8080", "the instance's base URL")
	out := fs.String("out", "report.csv", "the report to write")
	format := fs.String("format", "csv", "the report's format: csv (method,path,class,detail,time, written as it goes) or wfc (a Web Fuzzing Commons report, rewritten after each answer)")
	weak := fs.Bool("weak", false, "be the deliberately weak tool: a seeded random subset, shuffled, with pauses")
	seed := fs.Uint64("seed", 1, "the weak tool's random source")
	prob := fs.Float64("p", 0.5, "the weak tool's chance of trying each defect")
	pause := fs.Duration("pause", 200*time.Millisecond, "the weak tool's longest pause before a defect")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for one answer")
	admin := fs.String("admin", "", "the instance's admin URL (http://localhost:9090): with -format wfc, the report's extra coverage is the API coverage the instance measured of the run")
	showVersion := fs.Bool("version", false, "print the version and exit")
	var defects catalogue.Set
	fs.TextVar(&defects, "defects", catalogue.All(), "the instance's DEFECTS: with mutants:SEED[:N], replay that mutant set's triggers instead of the ten's")
	check := fs.Bool("check", false, "fail (exit 2) unless every request was answered (the Helm chart's test: every endpoint reachable through its Service)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, "showcase-replay", version.String())
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *format != "csv" && *format != "wfc" {
		return fmt.Errorf("-format %q: want csv or wfc", *format)
	}
	base2 := strings.TrimSuffix(*base, "/")
	client := &http.Client{Timeout: *timeout}
	doc, err := loadContract(ctx, client, base2)
	if err != nil {
		return err
	}
	var rep sink
	if *format == "wfc" {
		w := newWFCSink(*out)
		if *admin != "" {
			w.targetCoverage = func() (*coverage.Report, error) {
				c, _, err := agent.FetchCoverage(ctx, client, strings.TrimSuffix(*admin, "/"))
				return c, err
			}
		}
		rep = w
	} else if rep, err = newCSVSink(*out); err != nil {
		return err
	}
	defer rep.close()
	if err := rep.flush(); err != nil {
		return err
	}

	order := catalogue.Defects
	if defects.IsMutants() {
		order = defects.Defects()[len(catalogue.Defects):]
	}
	var rng *rand.Rand
	if *weak {
		rng = rand.New(rand.NewPCG(*seed, 0x5eed))
		order = append([]catalogue.Defect(nil), order...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	found, sent, unanswered := 0, 0, 0
	for _, def := range order {
		if rng != nil {
			if rng.Float64() >= *prob {
				continue
			}
			if *pause > 0 {
				select {
				case <-time.After(time.Duration(rng.Int64N(int64(*pause)))):
				case <-ctx.Done():
					return rep.flush()
				}
			}
		}
		e := catalogue.Endpoints[def.Endpoint-1]
		for i, tr := range def.Triggers {
			if ctx.Err() != nil {
				return rep.flush() // stopped: what was found is written
			}
			test := fmt.Sprintf("%s/%d", def.ID, i+1)
			ans, err := send(ctx, client, base2, e.Method, def.Target(tr), tr.Body, tr.Header)
			sent++
			if err != nil {
				unanswered++
				fmt.Fprintf(stderr, "showcase-replay: %s %s: %v\n", e.Method, def.Target(tr), err)
				rep.tested(test, e.Method, e.Path, def.Target(tr), 0)
			} else {
				rep.tested(test, e.Method, e.Path, def.Target(tr), ans.status)
				var oracle *catalogue.Trigger
				if def.IsMutant() {
					oracle = &tr
				}
				for _, fd := range doc.check(e.Method, e.Path, ans, oracle) {
					rep.found(test, e.Method, e.Path, fd, ans.at)
					found++
				}
			}
			// Written after each answer, as the run goes: a tool stopped
			// keeps what it found.
			if err := rep.flush(); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stderr, "showcase-replay: %d findings in %s\n", found, *out)
	if *check && unanswered > 0 {
		return fmt.Errorf("%d of %d requests went unanswered", unanswered, sent)
	}
	if *check {
		fmt.Fprintf(stderr, "showcase-replay: all %d requests answered\n", sent)
	}
	return nil
}

// answer is what one request got.
type answer struct {
	status      int
	contentType string
	body        []byte
	took        time.Duration
	at          time.Time // when the answer was complete
}

func send(ctx context.Context, client *http.Client, base, method, target, body, header string) (answer, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+target, rd)
	if err != nil {
		return answer{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if name, value, ok := strings.Cut(header, ":"); ok {
		req.Header[http.CanonicalHeaderKey(name)] = []string{strings.TrimSpace(value)}
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return answer{}, err
	}
	now := time.Now()
	return answer{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: b, took: now.Sub(start), at: now}, nil
}

// contract is the part of the served OpenAPI document the checks read.
type contract struct {
	Paths      map[string]map[string]operation `json:"paths"`
	Components struct {
		Schemas map[string]schema `json:"schemas"`
	} `json:"components"`
}

type operation struct {
	Security  []map[string][]string `json:"security"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema schema `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

type schema struct {
	Ref        string            `json:"$ref"`
	Type       string            `json:"type"`
	Required   []string          `json:"required"`
	Properties map[string]schema `json:"properties"`
	// AdditionalProperties is a schema, or a boolean (not read).
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
}

// typeOK reports whether a decoded JSON value is of the schema's type
// (any, when it names none).
func typeOK(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == float64(int64(n))
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

func loadContract(ctx context.Context, client *http.Client, base string) (*contract, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/openapi.json", nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the contract: %w", err)
	}
	defer res.Body.Close()
	var c contract
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the contract: %s %v", res.Status, err)
	}
	return &c, nil
}

type finding struct{ class, detail string }

// slow is the response time a contract-testing tool would call too slow
// (Schemathesis's --max-response-time 1).
const slow = time.Second

// check is what a contract-testing tool finds in an answer to a request
// sent without any credential; with an oracle (a mutant's trigger), to a
// request whose validity and credential it knows.
func (c *contract) check(method, path string, a answer, oracle *catalogue.Trigger) []finding {
	op, ok := c.Paths[path][strings.ToLower(method)]
	if !ok {
		return nil
	}
	var out []finding
	if a.status >= 500 {
		out = append(out, finding{string(catalogue.ServerError), fmt.Sprintf("status %d", a.status)})
	}
	if a.took >= slow {
		out = append(out, finding{string(catalogue.SlowResponse), fmt.Sprintf("took %s", a.took.Round(time.Millisecond))})
	}
	switch {
	case oracle == nil && a.status/100 == 2 && len(op.Security) > 0:
		out = append(out, finding{string(catalogue.AuthBypass), fmt.Sprintf("status %d without a credential", a.status)})
	case oracle != nil && a.status/100 == 2 && oracle.OffStatus == http.StatusUnauthorized:
		out = append(out, finding{string(catalogue.AuthBypass), fmt.Sprintf("status %d without the right key", a.status)})
	case oracle != nil && a.status/100 == 2 && oracle.OffStatus == http.StatusBadRequest:
		out = append(out, finding{string(catalogue.AcceptedInvalid), fmt.Sprintf("status %d to a request the contract forbids", a.status)})
	case oracle != nil && a.status == http.StatusBadRequest && oracle.OffStatus/100 == 2:
		out = append(out, finding{string(catalogue.RejectedValid), "status 400 to a request the contract allows"})
	}
	resp, ok := op.Responses[strconv.Itoa(a.status)]
	if !ok {
		resp, ok = op.Responses["default"]
	}
	if !ok {
		return append(out, finding{string(catalogue.UndocumentedStatus), fmt.Sprintf("status %d is not declared", a.status)})
	}
	media, _, _ := mime.ParseMediaType(a.contentType)
	content, ok := resp.Content[media]
	if !ok {
		if len(resp.Content) > 0 {
			out = append(out, finding{string(catalogue.WrongContentType), fmt.Sprintf("content type %q is not declared", a.contentType)})
		}
		return out
	}
	if media == "application/json" {
		var v any
		if err := json.Unmarshal(a.body, &v); err != nil {
			return append(out, finding{string(catalogue.InvalidBody), "not JSON: " + err.Error()})
		}
		s := content.Schema
		if s.Ref != "" {
			s = c.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
		}
		if obj, ok := v.(map[string]any); ok {
			for _, r := range s.Required {
				if _, ok := obj[r]; !ok {
					return append(out, finding{string(catalogue.InvalidBody), fmt.Sprintf("the required property %q is missing", r)})
				}
			}
			var extra schema
			_ = json.Unmarshal(s.AdditionalProperties, &extra) // false or absent leaves it empty
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				ps, declared := s.Properties[k]
				if !declared {
					ps = extra
				}
				if !typeOK(ps.Type, obj[k]) {
					return append(out, finding{string(catalogue.InvalidBody), fmt.Sprintf("the property %q is not of type %s", k, ps.Type)})
				}
			}
		}
	}
	return out
}

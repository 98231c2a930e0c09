package score

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// schemathesisEvent is the part of a Schemathesis 4 ndjson event the scorer
// reads: the version, and each scenario's checks by test case.
type schemathesisEvent struct {
	Initialize *struct {
		Version string `json:"schemathesis_version"`
	} `json:"Initialize"`
	EngineFinished   json.RawMessage `json:"EngineFinished"`
	NonFatalError    json.RawMessage `json:"NonFatalError"`
	FatalError       json.RawMessage `json:"FatalError"`
	ScenarioFinished *struct {
		Timestamp float64 `json:"timestamp"` // Unix seconds
		Recorder  *struct {
			Label  string                         `json:"label"`
			Checks map[string][]schemathesisCheck `json:"checks"`
		} `json:"recorder"`
	} `json:"ScenarioFinished"`
}

type schemathesisCheck struct {
	Name        string `json:"name"`
	Status      string `json:"status"`
	FailureInfo *struct {
		Failure struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"failure"`
	} `json:"failure_info"`
}

// readSchemathesis reads the ndjson event stream of Schemathesis 4
// (--report ndjson): every failed check of every scenario, on the
// operation its recorder names. A stream without its closing
// EngineFinished event, or whose last line is unfinished, is read for the
// events it holds and marked truncated.
func readSchemathesis(name string, br *bufio.Reader) (Report, error) {
	r := Report{Format: "schemathesis-ndjson", Tool: "Schemathesis"}
	lr := &lineReader{br: br}
	finished := false
	for {
		text, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return r, readError(name, lr.line+1, err)
		}
		line := lr.line
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		var ev schemathesisEvent
		if err := json.Unmarshal(text, &ev); err != nil {
			if lr.unended && r.Tool != "Schemathesis" {
				// The last line, unfinished: the writer was stopped in it.
				r.Truncated = fmt.Sprintf("cut short in line %d, its last and unfinished: scored for the events before it", line)
				break
			}
			return r, &InputError{File: name, Line: line, Msg: "not a Schemathesis event: " + err.Error()}
		}
		if ev.Initialize != nil {
			if !strings.HasPrefix(ev.Initialize.Version, "4.") {
				return r, &InputError{File: name, Line: line, Msg: fmt.Sprintf("Schemathesis %q: this reader knows the ndjson of Schemathesis 4", ev.Initialize.Version)}
			}
			r.Tool = "Schemathesis " + ev.Initialize.Version
		}
		if finished {
			return r, &InputError{File: name, Line: line, Msg: "an event after EngineFinished"}
		}
		finished = ev.EngineFinished != nil
		if ev.NonFatalError != nil || ev.FatalError != nil {
			r.ToolErrors++
		}
		if ev.ScenarioFinished == nil || ev.ScenarioFinished.Recorder == nil {
			continue
		}
		rec := ev.ScenarioFinished.Recorder
		var failed []schemathesisCheck
		cases := make([]string, 0, len(rec.Checks))
		for id := range rec.Checks {
			cases = append(cases, id)
		}
		sort.Strings(cases) // the map's order is not the file's
		for _, id := range cases {
			for _, c := range rec.Checks[id] {
				if c.Status == "failure" {
					failed = append(failed, c)
				}
			}
		}
		if len(failed) == 0 {
			continue
		}
		op, ok := methodAndPath(rec.Label)
		if !ok {
			return r, &InputError{File: name, Line: line, Msg: fmt.Sprintf("scenario %q names no operation", rec.Label)}
		}
		for _, c := range failed {
			if c.Name == "" {
				return r, &InputError{File: name, Line: line, Msg: "a failed check without a name"}
			}
			f := Finding{Operation: op, Check: c.Name, Class: classOf(c.Name), Line: line}
			if ts := ev.ScenarioFinished.Timestamp; ts > 0 {
				at := time.Unix(0, int64(ts*1e9)).UTC()
				f.At = &at
			}
			if c.FailureInfo != nil {
				f.Detail = c.FailureInfo.Failure.Message
			}
			r.add(f, 1)
		}
	}
	if r.Tool == "Schemathesis" {
		return r, &InputError{File: name, Line: 1, Msg: "no Initialize event: not a Schemathesis ndjson report"}
	}
	if !finished && r.Truncated == "" {
		// A run stopped before it closed its report (SIGTERM, a kill, a
		// full disk): what it wrote is what it found until then. Scored,
		// and marked, never taken for a whole run.
		r.Truncated = fmt.Sprintf("no EngineFinished event: the run was stopped before it closed its report, or the file was cut; scored for its %d lines", lr.line)
	}
	return r, nil
}

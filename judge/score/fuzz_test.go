package score_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
)

// FuzzRead: whatever the bytes, a reader never panics; it refuses them
// with an error naming the file, or reads findings that are each an
// operation (a method and a path), a check and a place in the file, and
// those score and render in every format.
func FuzzRead(f *testing.F) {
	for _, run := range []string{"defects-all-seed3", "defects-none-seed20240101"} {
		b, err := os.ReadFile(filepath.Join(schemathesis, run, "junit.xml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("{\"Initialize\":{\"schemathesis_version\":\"4.9.5\"}}\n{\"ScenarioFinished\":{\"recorder\":{\"label\":\"GET /response-conformance/missing-field\",\"checks\":{\"a\":[{\"name\":\"response_schema_conformance\",\"status\":\"failure\",\"failure_info\":{\"failure\":{\"type\":\"JsonSchemaError\",\"message\":\"Response violates schema\"}}}]}}}}\n{\"EngineFinished\":{}}\n"))
	for _, file := range []string{"apifuzzer-0.9.13/defects-all/junit.xml.gz", "nuclei-3.11.1/time-based-sqli-old/defects-all/nuclei.sarif", "nuclei-3.11.1/time-based-sqli-old/defects-all/nuclei.jsonl"} {
		b, err := os.ReadFile(filepath.Join(samples, file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("method,path,class,detail\nGET,/response-conformance/malformed-json,invalid-body,not JSON\n"))
	f.Add([]byte(`[{"method":"POST","path":"http://h/internal-server-errors/exceeding-column-size?x=1","class":"server-error"}]`))
	f.Add([]byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t","rules":[{"id":"r","properties":{"tags":["CWE-306"]}}]}},"results":[{"ruleId":"r","webRequest":{"method":"GET","target":"/security/unauthenticated-access"}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := readBytes("fuzz.in", data)
		if err != nil {
			var ie *score.InputError
			if !errors.As(err, &ie) || ie.File != "fuzz.in" || ie.Line < 0 {
				t.Fatalf("not an input error naming the file: %#v", err)
			}
			return
		}
		for _, f := range rep.Findings {
			if (f.Operation.Path != "" && !strings.HasPrefix(f.Operation.Path, "/")) || (f.Operation.Path == "" && f.Operation.Method != "") || f.Check == "" || f.Count < 1 || f.Line < 1 {
				t.Fatalf("a malformed finding: %+v", f)
			}
		}
		sc := score.Score(rep, score.Instance{Active: catalogue.All()}, &rep)
		for _, format := range score.Formats {
			if err := sc.Write(io.Discard, format); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A report cut short anywhere, or damaged in its gzip, is refused: an
// interrupted run must never be scored as if complete.
func TestCutReportsAreRefused(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	gz, err := os.ReadFile(filepath.Join(schemathesis, "defects-all-seed3", "report.ndjson.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(gz))
	ndjson, _ := io.ReadAll(zr)
	junit, _ := os.ReadFile(filepath.Join(schemathesis, "defects-all-seed3", "junit.xml"))
	sarifDoc := []byte(`{"version":"2.1.0","runs":[{"results":[{"ruleId":"server-error","webRequest":{"method":"POST","target":"/internal-server-errors/improper-unicode-encoding"}}]}]}`)
	for name, data := range map[string][]byte{"report.ndjson": ndjson, "report.ndjson.gz": gz, "junit.xml": junit, "r.sarif": sarifDoc} {
		if _, err := readBytes(name, data); err != nil {
			t.Fatalf("%s whole: %v", name, err)
		}
		end := bytes.LastIndexAny(data, ">}")
		if name == "report.ndjson.gz" {
			end = len(data) - 1
		}
		cuts := []int{0, 1, end}
		for range 40 {
			cuts = append(cuts, rnd.IntN(end))
		}
		// Every line boundary of the ndjson: each prefix is valid JSON lines.
		if name == "report.ndjson" {
			for i, b := range data[:end] {
				if b == '\n' {
					cuts = append(cuts, i+1)
				}
			}
		}
		for _, cut := range cuts {
			if _, err := readBytes(name, data[:cut]); err == nil {
				t.Errorf("%s cut at byte %d of %d was scored", name, cut, len(data))
			}
		}
	}
	damaged := bytes.Clone(gz)
	damaged[len(damaged)/2] ^= 0xff
	if _, err := readBytes("report.ndjson.gz", damaged); err == nil {
		t.Error("a damaged gzip was scored")
	}
}

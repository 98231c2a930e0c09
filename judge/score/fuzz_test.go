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
	for _, file := range []string{samples + "/apifuzzer-0.9.13/defects-all/junit.xml.gz", samples + "/nuclei-3.11.1/time-based-sqli-old/defects-all/nuclei.sarif",
		samples + "/nuclei-3.11.1/time-based-sqli-old/defects-all/nuclei.jsonl", wfcData + "/full.json", wfcData + "/cut.json"} {
		b, err := os.ReadFile(file)
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

// A report cut short anywhere, as a tool stopped in the middle of writing
// it leaves it, is either refused (nothing whole in it) or read for what it
// held before the cut and marked truncated: never taken for a whole report,
// never holding a finding the whole report does not. A gzip stream cut
// short or damaged is refused: a tool stopped does not leave one.
func TestCutReports(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	gz, err := os.ReadFile(filepath.Join(schemathesis, "defects-all-seed3", "report.ndjson.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(gz))
	ndjson, _ := io.ReadAll(zr)
	junit, _ := os.ReadFile(filepath.Join(schemathesis, "defects-all-seed3", "junit.xml"))
	nucleiRun := filepath.Join(samples, "nuclei-3.11.1", "time-based-sqli-old", "defects-all")
	reports := map[string][]byte{"report.ndjson": ndjson, "junit.xml": junit,
		"r.sarif": []byte(`{"version":"2.1.0","runs":[{"results":[{"ruleId":"server-error","webRequest":{"method":"POST","target":"/internal-server-errors/improper-unicode-encoding"}},` + "\n" +
			`{"ruleId":"server-error","webRequest":{"method":"GET","target":"/internal-server-errors/missing-header"}}]}]}`),
		"r.csv":  []byte("method,path,class\nGET,/security/unauthenticated-access,auth-bypass\nPOST,/internal-server-errors/improper-unicode-encoding,server-error\nGET,/response-conformance/missing-field,invalid-body\n"),
		"r.json": []byte(`[{"method":"GET","path":"/security/unauthenticated-access","class":"auth-bypass"},` + "\n" + `{"method":"GET","path":"/response-conformance/missing-field","class":"invalid-body"}]`),
	}
	for _, f := range []string{"nuclei.sarif", "nuclei.json", "nuclei.jsonl"} {
		if reports[f], err = os.ReadFile(filepath.Join(nucleiRun, f)); err != nil {
			t.Fatal(err)
		}
	}
	// A cut at a line's end leaves a whole report in the formats of lines
	// that have no closing line: nothing in it tells it was cut.
	lines := map[string]bool{"r.csv": true, "nuclei.jsonl": true}
	truncated := map[string]int{}
	for name, data := range reports {
		whole, err := readBytes(name, data)
		if err != nil || whole.Truncated != "" || len(whole.Findings) == 0 {
			t.Fatalf("%s whole: %v, truncated %q, %d findings", name, err, whole.Truncated, len(whole.Findings))
		}
		has := map[string]int{}
		for _, f := range whole.Findings {
			has[f.Operation.String()+" "+f.Check+" "+string(f.Class)] += f.Count
		}
		end := len(bytes.TrimRight(data, "\n")) - 1 // the last byte that ends the report
		cuts := []int{0, 1, end}
		for range 40 {
			cuts = append(cuts, rnd.IntN(end))
		}
		for i, b := range data[:end] { // every line boundary: each prefix is whole lines
			if b == '\n' {
				cuts = append(cuts, i+1)
			}
		}
		for _, cut := range cuts {
			rep, err := readBytes(name, data[:cut])
			if err != nil {
				continue
			}
			if rep.Truncated == "" && !(lines[name] && (cut == 0 || data[cut-1] == '\n' || data[cut] == '\n')) {
				t.Errorf("%s cut at byte %d of %d was read as whole", name, cut, len(data))
				continue
			}
			if rep.Truncated != "" {
				truncated[name]++
			}
			for _, f := range rep.Findings {
				if k := f.Operation.String() + " " + f.Check + " " + string(f.Class); f.Count > has[k] {
					t.Errorf("%s cut at byte %d: %s ×%d, the whole report has it ×%d", name, cut, k, f.Count, has[k])
				}
			}
		}
	}
	// Real cuts are read: the property above is not met by refusing all.
	for name := range reports {
		if truncated[name] < 5 {
			t.Errorf("%s: only %d cuts read as truncated", name, truncated[name])
		}
	}
	for _, cut := range []int{1, len(gz) / 2, len(gz) - 1} {
		if _, err := readBytes("report.ndjson.gz", gz[:cut]); err == nil {
			t.Errorf("a gzip stream cut at byte %d of %d was read", cut, len(gz))
		}
	}
	damaged := bytes.Clone(gz)
	damaged[len(damaged)/2] ^= 0xff
	if _, err := readBytes("report.ndjson.gz", damaged); err == nil {
		t.Error("a damaged gzip was scored")
	}
}

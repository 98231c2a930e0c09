package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// covCost is what counting API coverage costs the one-process gateway per
// request: BenchmarkRequestParallel (the gateway's own handling of a
// request, net/http's left out) of the gateway's test binary as built,
// against the same binary built with -tags showcase_nocoverage, the two run
// in turn.
type covCost struct {
	with, without map[string][]float64 // CPU ns per request, by sub-benchmark, per run
}

// covCostRuns is how many times each binary runs.
const covCostRuns = 5

// runCovCost builds the two test binaries into dir and runs them in turn.
func runCovCost(dir string) (*covCost, error) {
	bins := map[bool]string{}
	for _, counting := range []bool{true, false} {
		bin := filepath.Join(dir, "gateway-counting.test")
		args := []string{"test", "-c", "-o", bin}
		if !counting {
			bin = filepath.Join(dir, "gateway-not-counting.test")
			args = []string{"test", "-c", "-tags", "showcase_nocoverage", "-o", bin}
		}
		if o, err := exec.Command("go", append(args, "./gateway")...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build the gateway's tests: %v\n%s", err, o)
		}
		bins[counting] = bin
	}
	c := &covCost{with: map[string][]float64{}, without: map[string][]float64{}}
	for r := range covCostRuns {
		for _, counting := range []bool{true, false} {
			fmt.Printf("coverage's cost, run %d/%d, counting %v\n", r+1, covCostRuns, counting)
			got, err := benchCPU(bins[counting], "RequestParallel", "1", "200000x")
			if err != nil {
				return nil, err
			}
			into := c.with
			if !counting {
				into = c.without
			}
			for name, ns := range got {
				into[name] = append(into[name], ns)
			}
		}
	}
	return c, nil
}

// benchCPU runs the benchmarks matching bench of a test binary and returns
// each one's cpu-ns/op by its name (the part after the benchmark's own,
// without the -cpu suffix: GET, POST).
func benchCPU(bin, bench, cpus, benchtime string) (map[string]float64, error) {
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", bench, "-test.cpu", cpus, "-test.benchtime", benchtime)
	cmd.Dir = "gateway" // the package's directory, as go test runs it
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", filepath.Base(bin), err, out)
	}
	got := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		for i := 1; i+1 < len(f); i++ {
			if f[i+1] == "cpu-ns/op" {
				ns, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					return nil, fmt.Errorf("%s: %q", filepath.Base(bin), sc.Text())
				}
				name := f[0]
				if _, sub, ok := strings.Cut(name, "/"); ok {
					name = sub
				}
				if i := strings.LastIndexByte(name, '-'); i > 0 {
					if _, err := strconv.Atoi(name[i+1:]); err == nil {
						name = name[:i]
					}
				}
				got[name] = ns
			}
		}
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("%s: no cpu-ns/op in\n%s", filepath.Base(bin), out)
	}
	return got, nil
}

func medianFloat(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// table is the cost as Markdown; perRequest, when above 0, is the
// one-process gateway's CPU per served request (µs) measured in the same
// run, for coverage's share of a whole request.
func (c *covCost) table(perRequest float64) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("API coverage counting, `BenchmarkRequestParallel` (`-cpu 1`) of the gateway's tests as built and with `-tags showcase_nocoverage`, %d runs each in turn; medians of CPU ns per request.\n\n", covCostRuns)
	w("| request | counting | not counting | coverage costs | share of the handler |")
	if perRequest > 0 {
		w(" share of a served request (%.1f µs) |\n|---|---|---|---|---|---|\n", perRequest)
	} else {
		w("\n|---|---|---|---|---|\n")
	}
	names := make([]string, 0, len(c.with))
	for name := range c.with {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		on, off := medianFloat(c.with[name]), medianFloat(c.without[name])
		w("| %s | %.0f | %.0f | %.0f ns | %.1f %% |", name, on, off, on-off, 100*(on-off)/on)
		if perRequest > 0 {
			w(" **%.1f %%** |", 100*(on-off)/(perRequest*1000))
		}
		w("\n")
	}
	return b.String()
}

// writeCovCost writes the table to out/coverage-cost.md and stdout.
func writeCovCost(out string, c *covCost, perRequest float64) error {
	t := c.table(perRequest)
	fmt.Print("\n", t)
	return os.WriteFile(filepath.Join(out, "coverage-cost.md"), []byte("# What API coverage costs\n\n"+t), 0o644)
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/judge/codecov"
	"github.com/defectshowcase/showcase/judge/trials"
)

// PathCoverage is the admin port's API coverage (the gateway's).
const PathCoverage = "/coverage"

// FetchCoverage is the instance's API coverage, from its admin URL.
func FetchCoverage(ctx context.Context, client *http.Client, admin string) (*coverage.Report, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, admin+PathCoverage, nil)
	if err != nil {
		return nil, nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("the coverage: %w", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil || res.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("the coverage: %s %v", res.Status, err)
	}
	var c coverage.Report
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil, fmt.Errorf("the coverage: %w", err)
	}
	return &c, raw, nil
}

// RecordCoverage samples the coverage of the instance at admin while the
// trial's tool runs: every o.Every (5 s by default) the API coverage, a line
// of the trial's coverage.jsonl, and with o.Kind "code" a snapshot of the
// code coverage's counters into code/NNNN/. The returned function takes the
// last sample, writes the API coverage at the end whole (coverage.json), and
// returns once all is written. It runs nothing when o.Kind is "".
func RecordCoverage(ctx context.Context, o trials.CoverageOptions, admin, dir string, start time.Time) (stop func()) {
	if o.Kind == "" {
		return func() {}
	}
	every := o.EveryOrDefault()
	client := &http.Client{Timeout: 30 * time.Second}
	series, err := os.Create(filepath.Join(dir, trials.CoverageSeries))
	if err != nil {
		return func() {}
	}
	var mu sync.Mutex
	n := 0
	sample := func(ctx context.Context, final bool) {
		mu.Lock()
		defer mu.Unlock()
		c, raw, err := FetchCoverage(ctx, client, admin)
		if err != nil {
			return // the next tick asks again; the end's sample is what counts
		}
		s := trials.SampleOf(c, time.Since(start))
		if o.Kind == trials.CoverageCode {
			n++
			snap := fmt.Sprintf("%s/%04d", trials.CodeDir, n)
			if codecov.Snapshot(ctx, client, admin, filepath.Join(dir, snap)) == nil {
				s.Code = snap
			}
		}
		b, _ := json.Marshal(s)
		_, _ = series.Write(append(b, '\n'))
		if final {
			_ = os.WriteFile(filepath.Join(dir, trials.CoverageFinal), raw, 0o644)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sample(ctx, false)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		fctx, fcancel := context.WithTimeout(context.Background(), time.Minute)
		defer fcancel()
		sample(fctx, true)
		series.Close()
	}
}

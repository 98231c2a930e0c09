package errorssvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func postText(h http.Handler, text string) int {
	req := httptest.NewRequest(http.MethodPost, "/internal-server-errors/exceeding-column-size", strings.NewReader(`{"text":"`+text+`"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// Parallel writers: every 200 is a committed row, the only 500s are the
// planted ones (text of 16 characters or more), and the cap holds. Both
// in memory and in a WAL file.
func TestParallelWriters(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"memory", "file"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := Config{MaxRows: 1_000_000}
			if mode == "file" {
				cfg.SQLitePath = filepath.Join(t.TempDir(), "records.db")
			}
			svc, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			var ok, planted, other int64
			var mu sync.Mutex
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 1))
					for range 150 {
						long := r.IntN(4) == 0
						text := strings.Repeat("x", 1+r.IntN(15))
						if long {
							text = strings.Repeat("y", 16+r.IntN(40))
						}
						status := postText(svc.Handler(), text)
						mu.Lock()
						switch {
						case status == 200 && !long:
							ok++
						case status == 500 && long:
							planted++
						default:
							other++
							t.Errorf("%d for a %d-character text", status, len(text))
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			rows, err := svc.StoredRows(context.Background())
			if err != nil || rows != ok {
				t.Fatalf("%d rows stored, %d answered 200 (%v)", rows, ok, err)
			}
			t.Logf("%s: %d stored, %d planted 500s, %d others", mode, ok, planted, other)
		})
	}
	t.Run("cap", func(t *testing.T) {
		t.Parallel()
		svc, err := New(Config{MaxRows: 100})
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := range 250 {
					if s := postText(svc.Handler(), strconv.Itoa(i)); s != 200 {
						t.Errorf("%d", s)
					}
				}
			})
		}
		wg.Wait()
		if rows, _ := svc.StoredRows(context.Background()); rows != 100 {
			t.Fatalf("%d rows with a cap of 100 after 2000 inserts", rows)
		}
	})
}

func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	fmt.Sscan(string(b), &size, &resident)
	return float64(resident*int64(os.Getpagesize())) / (1 << 20)
}

// BenchmarkMillionInserts stores a million rows through the handler with
// the default cap and reports resident memory after 100,000 and after
// 1,000,000: it stays flat. Run: go test -run '^$' -bench MillionInserts -benchtime 1x
func BenchmarkMillionInserts(b *testing.B) {
	for b.Loop() {
		svc, err := New(Config{})
		if err != nil {
			b.Fatal(err)
		}
		var at100k float64
		for i := range 1_000_000 {
			if s := postText(svc.Handler(), strconv.Itoa(i)); s != 200 {
				b.Fatalf("insert %d: %d", i, s)
			}
			if i == 100_000 {
				runtime.GC()
				at100k = rssMB()
			}
		}
		runtime.GC()
		at1m := rssMB()
		rows, _ := svc.StoredRows(context.Background())
		_ = svc.Close()
		b.ReportMetric(at100k, "RSS-MB@100k")
		b.ReportMetric(at1m, "RSS-MB@1M")
		b.ReportMetric(float64(rows), "rows")
		if at1m > at100k*1.25+8 {
			b.Errorf("memory grew from %.1f MB to %.1f MB", at100k, at1m)
		}
	}
}

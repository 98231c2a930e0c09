package performancesvc

import (
	"context"
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"

	"testing"
	"time"

	"github.com/defectshowcase/showcase/platform/server"
)

// reference computes the answer with math/big, the obvious way.
func reference(n int, term *big.Int) []int {
	found := []int{}
	a, b := big.NewInt(0), big.NewInt(1)
	for i := range max(n, 2) {
		if a.Cmp(term) == 0 {
			found = append(found, i)
		}
		a.Add(a, b)
		a, b = b, a
	}
	return found
}

func TestFibonacciSearchMatchesReference(t *testing.T) {
	t.Parallel()
	fib := func(k int64) *big.Int { // F(k)
		a, b := big.NewInt(0), big.NewInt(1)
		for range k {
			a.Add(a, b)
			a, b = b, a
		}
		return a
	}
	terms := []*big.Int{big.NewInt(-1), big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(4), big.NewInt(55),
		big.NewInt(100000000), fib(100), fib(1500), new(big.Int).Add(fib(1500), big.NewInt(1)), new(big.Int).Lsh(fib(1500), 1)}
	// Every limb width gives the same answer: the benchmark's knob changes
	// the cost, never the result.
	for _, digits := range []int{1, 4, 8, 16, 18} {
		f := slowFibonacci{limbDigits: digits}
		for _, n := range []int{-3, 0, 1, 2, 3, 10, 11, 101, 1501, 3000} {
			for _, term := range terms {
				got, err := f.search(context.Background(), max(n, 2), term)
				if want := reference(n, term); err != nil || !slices.Equal(got, want) {
					t.Fatalf("%d-digit limbs, n=%d term=%s: got %v, %v; want %v", digits, n, term, got, err, want)
				}
			}
		}
	}
}

// The model is a lower bound on any machine: a search never answers
// before its modelled time (a slower machine may take longer; the
// benchmark shows how much).
func TestFibonacciSearchFollowsTheModel(t *testing.T) {
	t.Parallel()
	f := slowFibonacci{limbDigits: 8, cost: func(n int) time.Duration { return time.Duration(n) * 20 * time.Microsecond }}
	start := time.Now()
	got, err := f.search(context.Background(), 2000, big.NewInt(1))
	if took := time.Since(start); err != nil || took < 40*time.Millisecond || !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("n=2000 modelled at 40 ms: %v in %v, %v", got, took, err)
	}
}

// The planted curve is at least as slow as the original demo's at every n
// from 30000 up: the original's three measured points, joined by the power
// law through each pair, stay below it.
func TestPlantedCostCurve(t *testing.T) {
	t.Parallel()
	original := []struct {
		n int
		s float64
	}{{30000, 0.03}, {60000, 0.15}, {100000, 0.5}}
	for i := range len(original) - 1 {
		a, b := original[i], original[i+1]
		k := math.Log(b.s/a.s) / math.Log(float64(b.n)/float64(a.n))
		for n := a.n; n <= b.n; n += 100 {
			orig := a.s * math.Pow(float64(n)/float64(a.n), k)
			if got := plantedCost(n).Seconds(); got < orig {
				t.Fatalf("n=%d: the model's %.3f s is faster than the original's %.3f s", n, got, orig)
			}
		}
	}
	if got := plantedCost(maxN); got != 1200*time.Millisecond {
		t.Fatalf("plantedCost(100000) = %v, want 1.2 s", got)
	}
}

func TestFibonacciSearchStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := plantedFibonacci.search(ctx, maxN, big.NewInt(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// Cancelled while pacing: it stops long before its modelled hour.
	f := slowFibonacci{limbDigits: 8, cost: func(int) time.Duration { return time.Hour }}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := f.search(ctx, maxN, big.NewInt(1)); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %v, want context.DeadlineExceeded at once", err, time.Since(start))
	}
}

func TestItemMap(t *testing.T) {
	t.Parallel()
	body, err := itemMap(context.Background(), 3, time.Microsecond)
	if err != nil || string(body) != `{"item_0":"value_0","item_1":"value_1","item_2":"value_2"}` {
		t.Fatalf("got %s, %v", body, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := itemMap(ctx, 1000, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled request kept waiting: %v", err)
	}
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	l := newLimiter(1, 1)
	ctx := context.Background()
	if err := l.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- l.acquire(ctx) }() // takes the one queue place
	for len(l.waiting) < 2 {
		time.Sleep(time.Millisecond)
	}
	if err := l.acquire(ctx); !errors.Is(err, errQueueFull) {
		t.Fatalf("third acquire: %v, want errQueueFull", err)
	}
	l.release()
	if err := <-waited; err != nil {
		t.Fatalf("queued acquire: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if err := l.acquire(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	l.release()
	if len(l.waiting) != 0 || len(l.slots) != 0 {
		t.Fatalf("tokens leaked: %d waiting, %d slots", len(l.waiting), len(l.slots))
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string, args ...string) (Config, error) {
		var cfg Config
		s := server.NewSettings("performance-svc", func(k string) string { return env[k] })
		cfg.Register(s)
		return cfg, s.Parse(args)
	}
	got, err := parse(map[string]string{"ITEM_COST": "2ms", "FIB_WORKERS": "3", "FIB_QUEUE": "0"})
	if err != nil || got.ItemCost != 2*time.Millisecond || got.FibWorkers != 3 || got.FibQueue != 0 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := parse(map[string]string{"FIB_WORKERS": "0"}); err == nil {
		t.Fatal("FIB_WORKERS=0 accepted")
	}
	if got, err := parse(nil, "-fib-queue", "5"); err != nil || got.FibQueue != 5 {
		t.Fatalf("-fib-queue: %+v, %v", got, err)
	}
}

// BenchmarkFibonacciCostModel proves the planted slowness is a property of
// the service, not of the CPU: every addition made twice as dear (4-digit
// limbs, as on a machine twice as slow) or half as dear (16-digit limbs, as
// on one twice as fast), the time stays on the curve. It prints, per speed
// factor and n, the bare arithmetic's time (unpaced: the factor it really
// made), the paced time, and the paced time's distance from the curve.
// Run: go test -run '^$' -bench CostModel -benchtime 3x ./performance-svc/
func BenchmarkFibonacciCostModel(b *testing.B) {
	for _, factor := range []struct {
		name   string
		digits int
	}{{"0.5", 16}, {"1", 8}, {"2", 4}} {
		for _, n := range []int{30000, 60000, 100000} {
			b.Run("factor="+factor.name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				bare := slowFibonacci{limbDigits: factor.digits}
				paced := slowFibonacci{limbDigits: factor.digits, cost: plantedCost}
				var bareTook, worst time.Duration
				b.ReportAllocs()
				for b.Loop() {
					start := time.Now()
					if _, err := bare.search(context.Background(), n, big.NewInt(2)); err != nil {
						b.Fatal(err)
					}
					bareTook += time.Since(start)
					start = time.Now()
					if _, err := paced.search(context.Background(), n, big.NewInt(2)); err != nil {
						b.Fatal(err)
					}
					took := time.Since(start)
					if d := took - plantedCost(n); d.Abs() > worst.Abs() {
						worst = d
					}
				}
				b.ReportMetric(float64(bareTook.Microseconds())/1000/float64(b.N), "bare-ms")
				b.ReportMetric(float64(b.Elapsed().Microseconds()-bareTook.Microseconds())/1000/float64(b.N), "paced-ms")
				b.ReportMetric(float64(plantedCost(n).Microseconds())/1000, "curve-ms")
				b.ReportMetric(100*worst.Seconds()/plantedCost(n).Seconds(), "worst-off-curve-%")
			})
		}
	}
}

// BenchmarkItemMapPacing prints how far 1000 items at 1 ms drift from 1.000 s.
func BenchmarkItemMapPacing(b *testing.B) {
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := itemMap(context.Background(), 1000, time.Millisecond); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(start))
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/1000items")
	b.ReportMetric(100*(worst.Seconds()-1), "worst-drift-%")
}

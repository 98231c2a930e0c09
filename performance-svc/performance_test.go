package performancesvc

import (
	"context"
	"errors"
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
	terms := []*big.Int{big.NewInt(-1), big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(4), big.NewInt(55), fib(100), fib(1500), new(big.Int).Add(fib(1500), big.NewInt(1))}
	for _, n := range []int{-3, 0, 1, 2, 3, 10, 11, 101, 1501, 3000} {
		for _, term := range terms {
			got, err := fibonacciSearch(context.Background(), max(n, 2), term)
			if want := reference(n, term); err != nil || !slices.Equal(got, want) {
				t.Fatalf("n=%d term=%s: got %v, %v; want %v", n, term, got, err, want)
			}
		}
	}
}

func TestFibonacciSearchStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fibonacciSearch(ctx, maxN, big.NewInt(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
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

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := server.NewEnv(func(k string) string {
		return map[string]string{"ITEM_COST": "2ms", "FIB_WORKERS": "3", "FIB_QUEUE": "0"}[k]
	})
	got := ConfigFromEnv(server.Deps{Env: env})
	if env.Err() != nil || got.ItemCost != 2*time.Millisecond || got.FibWorkers != 3 || got.FibQueue != 0 {
		t.Fatalf("got %+v, %v", got, env.Err())
	}
	env = server.NewEnv(func(k string) string { return map[string]string{"FIB_WORKERS": "0"}[k] })
	if ConfigFromEnv(server.Deps{Env: env}); env.Err() == nil {
		t.Fatal("FIB_WORKERS=0 accepted")
	}
}

// BenchmarkFibonacciSearch prints the cost of the planted slowness at the
// sizes behaviour-notes.md names; at n=100000 it must be 1.1 to 1.5 s and
// the growth faster than linear. Run: go test -bench Fibonacci -benchtime 3x
func BenchmarkFibonacciSearch(b *testing.B) {
	for _, n := range []int{30000, 60000, 100000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fibonacciSearch(context.Background(), n, big.NewInt(2)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/request")
		})
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

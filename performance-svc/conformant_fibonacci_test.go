package performancesvc

import (
	"math/big"
	"slices"
	"testing"
)

// The closed form agrees with the sequence itself for every term of the
// first 2000 numbers and for the numbers next to them.
func TestFibonacciIndices(t *testing.T) {
	t.Parallel()
	const n = 2000
	seq := []*big.Int{big.NewInt(0), big.NewInt(1)}
	for len(seq) < n+5 {
		seq = append(seq, new(big.Int).Add(seq[len(seq)-1], seq[len(seq)-2]))
	}
	want := func(limit int, term *big.Int) []int {
		found := []int{}
		for i := 0; i < limit; i++ {
			if seq[i].Cmp(term) == 0 {
				found = append(found, i)
			}
		}
		return found
	}
	for i := 0; i < n+5; i += 1 + i/50 {
		for _, term := range []*big.Int{seq[i], new(big.Int).Add(seq[i], big.NewInt(1)), new(big.Int).Sub(seq[i], big.NewInt(1))} {
			for _, limit := range []int{1, 2, 3, i, i + 1, n} {
				if limit < 1 || term.Sign() < 0 {
					continue
				}
				if got, w := fibonacciIndices(limit, term), want(min(limit, len(seq)), term); !slices.Equal(got, w) {
					t.Fatalf("n=%d term=%s: %v, want %v", limit, term, got, w)
				}
			}
		}
	}
	if got := fibonacciIndices(100000, seq[1999]); !slices.Equal(got, []int{1999}) {
		t.Fatalf("F(1999): %v", got)
	}
	huge, _ := new(big.Int).SetString(string(slices.Repeat([]byte("9"), 4300)), 10)
	if got := fibonacciIndices(100000, huge); len(got) != 0 {
		t.Fatalf("a 4300-digit non-Fibonacci number: %v", got)
	}
	if got := fibonacciIndices(100000, fibonacci(20000)); !slices.Equal(got, []int{20000}) {
		t.Fatalf("F(20000): %v", got)
	}
}

func BenchmarkFibonacciIndices(b *testing.B) {
	term := fibonacci(99999)
	for b.Loop() {
		if got := fibonacciIndices(100000, term); len(got) != 1 {
			b.Fatal(got)
		}
	}
}

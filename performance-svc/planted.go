package performancesvc

import (
	"errors"
	"math/big"
	"net/http"
	"time"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
)

var (
	bigTwo = big.NewInt(2)

	limitNotPositiveBody = []byte(`{"error":"Limit must be greater than 0"}`)
	missingParamsBody    = []byte(`{"error":"Missing required parameters"}`)
	nTooLargeBody        = []byte(`{"error":"n should be less than or equal to 100000"}`)
	busyBody             = []byte(`{"error":"Too many requests for the inefficient algorithm; retry later"}`)
)

// clampedSlowItems is endpoint 9 as planted.
func (s *Service) clampedSlowItems(w http.ResponseWriter, r *http.Request) {
	// DEFECT(PERF-01): limit is clamped rather than validated (absent or
	// not an integer: the default; above the maximum: the maximum), and
	// every item costs itemCost (1 ms), so the default request takes a full
	// second (see itemMap).
	limit := maxLimit
	if text, ok := reqparse.QueryFirst(r.URL.RawQuery, "limit"); ok {
		if v, ok := reqparse.ParseInt(text); ok {
			switch {
			case v.Sign() <= 0:
				respond.JSON(w, http.StatusBadRequest, limitNotPositiveBody)
				return
			case v.Cmp(bigMaxLimit) < 0:
				limit = int(v.Int64())
			}
		}
	}
	start := time.Now()
	body, err := itemMap(r.Context(), limit, s.itemCost)
	if err != nil {
		w.WriteHeader(observe.StatusClientClosedRequest) // recorded, never received
		return
	}
	s.work.observe(routes.Pattern(r), limit, time.Since(start))
	if time.Duration(limit)*s.itemCost >= noticeable {
		observe.Triggered(w, r)
	}
	respond.JSON(w, http.StatusOK, body)
}

// generateAndSearch is endpoint 10 as planted: the sequence is generated
// number by number by the slow algorithm (planted_fibonacci.go).
func (s *Service) generateAndSearch(w http.ResponseWriter, r *http.Request) {
	n, term, ok := searchParams(r, reqparse.ParseInt)
	if !ok {
		respond.JSON(w, http.StatusBadRequest, missingParamsBody)
		return
	}
	if n.Cmp(bigMaxN) > 0 {
		respond.JSON(w, http.StatusBadRequest, nTooLargeBody)
		return
	}
	length := 2 // below 2, the sequence is still its two seeds
	if n.Cmp(bigTwo) > 0 {
		length = int(n.Int64())
	}
	if length > cheapN {
		if err := s.fib.acquire(r.Context()); err != nil {
			if errors.Is(err, errQueueFull) {
				w.Header().Set("Retry-After", "1")
				respond.JSON(w, http.StatusServiceUnavailable, busyBody)
				return
			}
			w.WriteHeader(observe.StatusClientClosedRequest) // left while queued
			return
		}
		defer s.fib.release()
	}
	start := time.Now()
	found, err := plantedFibonacci.search(r.Context(), length, term)
	if err != nil {
		w.WriteHeader(observe.StatusClientClosedRequest) // recorded, never received
		return
	}
	s.work.observe(routes.Pattern(r), length, time.Since(start))
	if plantedCost(length) >= noticeable {
		observe.Triggered(w, r)
	}
	respond.Value(w, http.StatusOK, foundAt{FoundAt: found})
}

package performancesvc

import (
	"net/http"
	"time"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
)

var (
	limitInvalidBody  = []byte(`{"error":"Invalid limit: want an integer from 1 to 1000"}`)
	searchInvalidBody = []byte(`{"error":"Invalid input: n must be an integer from 1 to 100000, and searchTerm an integer of at least 0"}`)
)

// listItems is endpoint 9 with its defect switched off: limit is optional
// (its default is 1000) and otherwise an integer from 1 to 1000.
func (s *Service) listItems(w http.ResponseWriter, r *http.Request) {
	limit := maxLimit
	if text, ok := reqparse.QueryFirst(r.URL.RawQuery, "limit"); ok {
		v, ok := reqparse.ParseStrictInt(text)
		if !ok || v.Sign() <= 0 || v.Cmp(bigMaxLimit) > 0 {
			respond.JSON(w, http.StatusBadRequest, limitInvalidBody)
			return
		}
		limit = int(v.Int64())
	}
	start := time.Now()
	body, err := itemMap(r.Context(), limit, 0)
	if err != nil {
		w.WriteHeader(observe.StatusClientClosedRequest)
		return
	}
	s.work.observe(routes.Pattern(r), limit, time.Since(start))
	respond.JSON(w, http.StatusOK, body)
}

// searchFibonacci is endpoint 10 with its defect switched off: n from 1 to
// 100000 and searchTerm at least 0, both integers, or 400; the indices
// among the first n Fibonacci numbers, found without generating them.
func (s *Service) searchFibonacci(w http.ResponseWriter, r *http.Request) {
	n, term, ok := searchParams(r, reqparse.ParseStrictInt)
	if !ok || n.Sign() <= 0 || n.Cmp(bigMaxN) > 0 || term.Sign() < 0 {
		respond.JSON(w, http.StatusBadRequest, searchInvalidBody)
		return
	}
	start := time.Now()
	found := fibonacciIndices(int(n.Int64()), term)
	s.work.observe(routes.Pattern(r), int(n.Int64()), time.Since(start))
	respond.Value(w, http.StatusOK, foundAt{FoundAt: found})
}

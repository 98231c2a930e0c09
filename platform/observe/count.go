package observe

import (
	"net/http"
	"time"
)

// Count records that the request r (with the given ID), answered through w,
// triggered p at time at, for a caller that sees the trigger itself rather
// than through Middleware: the gateway, which plants its contract mutants
// in front of the services.
func (p *Planted) Count(w http.ResponseWriter, r *http.Request, requestID string, at time.Time) {
	p.count(r, requestID, RequestIndexOf(w), at)
}

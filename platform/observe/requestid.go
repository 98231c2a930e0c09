package observe

import (
	crand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strconv"
)

// HeaderRequestID carries a request's ID from the client through the
// gateway to the service and back.
const HeaderRequestID = "X-Request-Id"

// MaxRequestIDLen bounds an accepted incoming ID.
const MaxRequestIDLen = 128

var (
	idPrefix = newPrefix()
	// idCounters number the IDs a process makes, one counter a shard so
	// that requests on many cores do not write one line: shard s of n
	// makes the numbers s+n, s+2n, …, never another's.
	idCounters = make([]paddedUint64, shardCount)
)

func newPrefix() string {
	b := make([]byte, 6)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b) + "-"
}

// NewRequestID makes an ID unique across processes: a random per-process
// prefix and a number no other ID of the process has.
func NewRequestID() string {
	s := rand.Uint32() & uint32(len(idCounters)-1)
	n := idCounters[s].v.Add(1)*uint64(len(idCounters)) + uint64(s)
	return idPrefix + strconv.FormatUint(n, 10)
}

// SaneRequestID reports whether an incoming ID can be kept: 1 to 128
// characters of letters, digits and . _ : - (nothing a log or header could
// be confused by).
func SaneRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// IncomingRequestID keeps a sane incoming X-Request-Id or makes one, and
// puts it first on the request's header (for an upstream). Its value slice
// is the request's own: share it read-only.
func IncomingRequestID(r *http.Request) string {
	id := r.Header.Get(HeaderRequestID)
	if !SaneRequestID(id) {
		id = NewRequestID()
		r.Header[HeaderRequestID] = []string{id}
	}
	return id
}

// requestID is IncomingRequestID, with the ID also on the response.
func requestID(w http.ResponseWriter, r *http.Request) string {
	id := IncomingRequestID(r)
	w.Header()[HeaderRequestID] = r.Header[HeaderRequestID][:1:1] // read-only, shared by both headers
	return id
}

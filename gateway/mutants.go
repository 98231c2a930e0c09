package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
)

// mutants plants a mutant set (DEFECTS=mutants:SEED[:N]) in front of the
// categories' handlers: the one place a mutant is applied, the same in one
// process and in front of split services. A request to an operation with
// mutants, that meets one's condition, is answered by the handler into a
// buffer; the mutant's operator rewrites that answer, and when it changed
// it, the mutant was triggered. Every other request passes untouched, and
// without a mutant set the gateway has no layer at all.
type mutants struct {
	byPath  map[string][]catalogue.Mutant
	planted map[catalogue.ID]*observe.Planted
	logger  *slog.Logger
	// wait holds the answer to r d, or less if r's context ends first
	// (false).
	wait func(r *http.Request, d time.Duration) bool
}

// newMutants is the layer of set's mutants, nil without any.
func newMutants(set catalogue.Set, in *observe.Instruments) *mutants {
	ms := set.Mutants()
	if len(ms) == 0 {
		return nil
	}
	l := &mutants{byPath: map[string][]catalogue.Mutant{}, planted: map[catalogue.ID]*observe.Planted{}, logger: in.Logger, wait: mutantWait}
	gauge := observe.DefectActive(in.Registerer)
	for _, m := range ms {
		p := m.Endpoint().Path
		l.byPath[p] = append(l.byPath[p], m)
		l.planted[m.ID()] = in.Planted(string(m.ID()))
		gauge.WithLabelValues(string(m.ID())).Set(1)
	}
	return l
}

// mutantWait is how a slow mutant waits: a timer, whatever the CPU.
var mutantWait = func(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// serve answers r, a request with its operation's method to an operation
// that has mutants.
func (l *mutants) serve(w http.ResponseWriter, r *http.Request, ms []catalogue.Mutant, next http.Handler) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		// The conditions read at most catalogue.MaxInputBody; one byte
		// more tells a longer body, which meets no condition on the body.
		read, err := io.ReadAll(io.LimitReader(r.Body, catalogue.MaxInputBody+1))
		if err == nil {
			body = read
		}
		// The handler reads the body whole, as sent.
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(read), r.Body), r.Body}
	}
	in := catalogue.NewInput(r, body)
	var m *catalogue.Mutant
	for i := range ms {
		if ms[i].Matches(in) {
			m = &ms[i]
			break
		}
	}
	if m == nil {
		next.ServeHTTP(w, r)
		return
	}
	id := observe.IncomingRequestID(r)
	buf := &bufferedAnswer{header: http.Header{}}
	next.ServeHTTP(buf, r)
	conformant := catalogue.Answer{Status: buf.code(), ContentType: buf.header.Get("Content-Type"), Body: buf.body.Bytes()}
	// DEFECT(mutants): the mutant's operator rewrites the conformant answer.
	answer, changed := m.Apply(conformant)
	if changed {
		if answer.Wait > 0 && !l.wait(r, answer.Wait) {
			return // the client left while the answer was held
		}
		l.planted[m.ID()].Count(r, id, time.Now())
		l.logger.LogAttrs(r.Context(), slog.LevelInfo, "mutant triggered", slog.String("defect", string(m.ID())),
			slog.String("request_id", id), slog.Int("status", answer.Status), slog.Int("conformant_status", conformant.Status))
	}
	h := w.Header()
	for k, v := range buf.header {
		h[k] = v
	}
	h.Set("Content-Type", answer.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(answer.Body)))
	w.WriteHeader(answer.Status)
	_, _ = w.Write(answer.Body)
}

// bufferedAnswer holds a handler's answer for a mutant to rewrite.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(code int) {
	if b.status == 0 && code >= 200 {
		b.status = code
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// Flush does nothing: the answer is sent whole once rewritten.
func (b *bufferedAnswer) Flush() {}

func (b *bufferedAnswer) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

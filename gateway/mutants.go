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
// mutants that meets one's condition is answered by the handler into a
// buffer; the mutant's operator rewrites that answer, and when it changed
// it, the mutant was triggered. Every other answer is the handler's as it
// was (held first where the conditions read the body), and without a
// mutant set the gateway has no layer at all.
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
// that has mutants. Where the conditions read no body, they are asked
// first, and a request none meets passes untouched. Where they read the
// body, the handler reads it as it would without the layer (a body the
// client breaks fails it just the same) while the layer keeps a copy, and
// its answer is held until the conditions, asked of the whole body, have
// said whether a mutant rewrites it.
func (l *mutants) serve(w http.ResponseWriter, r *http.Request, ms []catalogue.Mutant, next http.Handler) {
	id := observe.IncomingRequestID(r)
	buf := &bufferedAnswer{header: http.Header{}}
	var m *catalogue.Mutant
	if !ms[0].ReadsBody() {
		if m = matching(ms, catalogue.NewInput(r, nil)); m == nil {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(buf, r)
	} else {
		body := &bodyCopy{}
		if r.Body != nil && r.Body != http.NoBody {
			orig := r.Body
			body.from = orig
			r.Body = struct {
				io.Reader
				io.Closer
			}{body, orig}
		}
		next.ServeHTTP(buf, r)
		m = matching(ms, catalogue.NewInput(r, body.whole()))
	}
	if buf.status == 0 && r.Context().Err() != nil {
		return // the client left before the handler answered: no answer, as without the layer
	}
	answer, changed := buf.answer(), false
	if m != nil {
		// DEFECT(mutants): the mutant's operator rewrites the conformant
		// answer.
		answer, changed = m.Apply(answer)
	}
	if changed {
		conformant := buf.code()
		if answer.Wait > 0 && !l.wait(r, answer.Wait) {
			return // the client left while the answer was held
		}
		l.planted[m.ID()].Count(w, r, id, time.Now())
		l.logger.LogAttrs(r.Context(), slog.LevelInfo, "mutant triggered", slog.String("defect", string(m.ID())),
			slog.String("request_id", id), slog.Int("status", answer.Status), slog.Int("conformant_status", conformant))
	}
	h := w.Header()
	for k, v := range buf.header {
		h[k] = v
	}
	if answer.ContentType != "" || buf.header.Get("Content-Type") != "" {
		h.Set("Content-Type", answer.ContentType)
	}
	h.Set("Content-Length", strconv.Itoa(len(answer.Body)))
	w.WriteHeader(answer.Status)
	_, _ = w.Write(answer.Body)
}

// matching is the mutant whose condition in meets, if any: on one
// operation, no request meets two.
func matching(ms []catalogue.Mutant, in catalogue.Input) *catalogue.Mutant {
	for i := range ms {
		if ms[i].Matches(in) {
			return &ms[i]
		}
	}
	return nil
}

// bodyCopy reads a request's body for its handler and keeps a copy of up
// to catalogue.MaxInputBody and one byte more, and whether reading it
// failed.
type bodyCopy struct {
	from   io.Reader
	copied bytes.Buffer
	failed bool
	done   bool
}

func (b *bodyCopy) Read(p []byte) (int, error) {
	if b.from == nil {
		return 0, io.EOF
	}
	n, err := b.from.Read(p)
	if keep := catalogue.MaxInputBody + 1 - b.copied.Len(); keep > 0 {
		b.copied.Write(p[:min(n, keep)])
	}
	switch {
	case err == io.EOF:
		b.done = true
	case err != nil:
		b.failed = true
	}
	return n, err
}

// whole is the body as the conditions read it: what the handler left
// unread is read too, up to the limit; nil when reading failed.
func (b *bodyCopy) whole() []byte {
	if b.from != nil && !b.done && !b.failed && b.copied.Len() <= catalogue.MaxInputBody {
		_, _ = io.Copy(io.Discard, io.LimitReader(b, int64(catalogue.MaxInputBody+1-b.copied.Len())))
	}
	if b.failed {
		return nil
	}
	return b.copied.Bytes()
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

// answer is the answer held, as a mutant rewrites it.
func (b *bufferedAnswer) answer() catalogue.Answer {
	return catalogue.Answer{Status: b.code(), ContentType: b.header.Get("Content-Type"), Body: b.body.Bytes()}
}

func (b *bufferedAnswer) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

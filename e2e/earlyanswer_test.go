package e2e_test

import (
	"net/http"
	"testing"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// An answer given before the body is read reaches the client: every case
// of the suite answered 413 or 415 (a body over the limit, refused by its
// Content-Length before a byte of it is read, or of a type not accepted),
// sent 30 times, each on a new connection, to the real binaries in one
// process and as five, gets its answer. Before platform/server's
// answerBeforeBody, the client still sending a 1 MiB body had its
// connection reset and lost the 413 about a third of the time in one
// process, and now and then through the gateway.
func TestAnswerBeforeTheBody(t *testing.T) {
	t.Parallel()
	for _, split := range []bool{false, true} {
		d := startDeployment(t, split)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		sent, failed := 0, 0
		for _, ep := range suite.Endpoints() {
			for _, c := range ep.Cases {
				if c.Status != http.StatusRequestEntityTooLarge && c.Status != http.StatusUnsupportedMediaType {
					continue
				}
				c = ep.For(c, catalogue.All())
				for range 30 {
					sent++
					res, err := suite.Do(t.Context(), client, d.base, c)
					switch {
					case err != nil:
						failed++
						if failed <= 3 {
							t.Errorf("split %v: %s %s: %v", split, c.Method, c.Target, err)
						}
					case res.Status != c.Status:
						t.Errorf("split %v: %s %s: %d, want %d", split, c.Method, c.Target, res.Status, c.Status)
					}
				}
			}
		}
		if sent == 0 || failed > 0 {
			t.Errorf("split %v: %d of %d got no answer", split, failed, sent)
		}
	}
}

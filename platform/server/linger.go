package server

import (
	"net/http"
	"time"
)

// answerBeforeBody lets a client that asked to close the connection
// (Connection: close) read an answer given before its request's body was
// read: a 413 for a Content-Length over the limit, a 415 given at once.
// The client is still sending. On a connection it keeps, net/http itself
// reads what is left or, when too much is, closes gently (it answers, sends
// a FIN, and waits a little before closing). On one the client asked to
// close it closes at once, the unread bytes make the kernel reset the
// connection, and the client's kernel drops the answer before the client
// reads it: "connection reset by peer" instead of the 413. Reading one byte
// past a limit of 0 (http.MaxBytesReader) tells net/http that the body's
// limit was hit, and it closes gently there too. The answer is sent first,
// and the byte waited for a second at most, so a client that stops sending
// is not held. A request that waits for 100 Continue has sent no body, and
// is left as it is.
func answerBeforeBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if !r.Close || r.Body == nil || r.Body == http.NoBody || r.Header.Get("Expect") != "" {
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		_ = rc.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = http.MaxBytesReader(w, r.Body, 0).Read(make([]byte, 1)) // io.EOF at once where the body was read
	})
}

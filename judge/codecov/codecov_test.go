package codecov_test

import (
	"archive/tar"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/judge/codecov"
)

func archive(t *testing.T, files map[string]string, typeflag byte) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Size: int64(len(data)), Mode: 0o644, Typeflag: typeflag}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(data))
	}
	_ = tw.Close()
	return b.Bytes()
}

const hash = "0123456789abcdef0123456789abcdef"

// A snapshot holds Go's data files by their own names, nothing else: no
// path, no link, no other name, nothing short.
func TestUnpack(t *testing.T) {
	t.Parallel()
	good := map[string]string{"covmeta." + hash: "m", "covcounters." + hash + ".12.34": "c"}
	dir := t.TempDir()
	if err := codecov.Unpack(bytes.NewReader(archive(t, good, tar.TypeReg)), dir); err != nil {
		t.Fatal(err)
	}
	for name, data := range good {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != data {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	for what, a := range map[string][]byte{
		"a path":         archive(t, map[string]string{"../covmeta." + hash: "m", "covcounters." + hash + ".1.2": "c"}, tar.TypeReg),
		"another name":   archive(t, map[string]string{"covmeta." + hash: "m", "passwd": "c"}, tar.TypeReg),
		"a link":         archive(t, map[string]string{"covmeta." + hash: ""}, tar.TypeSymlink),
		"the meta alone": archive(t, map[string]string{"covmeta." + hash: "m"}, tar.TypeReg),
		"not a tar":      []byte("{}"),
	} {
		if err := codecov.Unpack(bytes.NewReader(a), t.TempDir()); err == nil {
			t.Errorf("%s: unpacked", what)
		}
	}
}

// An instance built without coverage answers 404: ErrNotBuilt; any other
// failure is an error of its own.
func TestSnapshotAnswers(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]string{http.StatusNotFound: codecov.ErrNotBuilt.Error(), http.StatusForbidden: "403"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/coverage/code" {
				t.Errorf("asked %s", r.URL.Path)
			}
			w.WriteHeader(status)
		}))
		err := codecov.Snapshot(t.Context(), srv.Client(), srv.URL+"/", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d: %v, want %q", status, err, want)
		}
		srv.Close()
	}
}

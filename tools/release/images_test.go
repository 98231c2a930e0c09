package release

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The same binaries and commit give the same index digest (the images are
// reproducible); a different binary gives another; each image holds the
// binary at its path, runs as User, and says its platform.
func TestIndexReproducible(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, arch)
		if err := os.WriteFile(p, []byte("binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins["linux/"+arch] = p
	}
	meta := Meta{Version: "v1.2.3", Revision: "abc", Created: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), Source: "https://example.invalid"}
	im := Images[len(Images)-1] // showcase-replay: a binary below /usr/local/bin
	a, err := im.Index(bins, meta)
	if err != nil {
		t.Fatal(err)
	}
	b, err := im.Index(bins, meta)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("the same inputs, two digests: %s %s", da, db)
	}
	if err := os.WriteFile(bins["linux/arm64"], []byte("another"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := im.Index(bins, meta)
	if err != nil {
		t.Fatal(err)
	}
	if dc, _ := c.Digest(); dc == da {
		t.Error("another binary, the same digest")
	}
	m, err := a.IndexManifest()
	if err != nil || len(m.Manifests) != 2 {
		t.Fatalf("manifests: %v %v", m, err)
	}
	for i, d := range m.Manifests {
		img, err := a.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := img.ConfigFile()
		if cf.Config.User != User || cf.Architecture != Platforms[i].Architecture || cf.Config.Entrypoint[0] != im.Path || d.Platform.Architecture != cf.Architecture {
			t.Errorf("image %d: %+v %+v", i, cf.Config, d.Platform)
		}
	}
	if _, err := im.Index(map[string]string{"linux/amd64": bins["linux/amd64"]}, meta); err == nil {
		t.Error("an index without its arm64 binary")
	}
}

// Binaries reads goreleaser's artifacts.json.
func TestBinaries(t *testing.T) {
	dir := t.TempDir()
	dist := filepath.Join(dir, "dist")
	os.MkdirAll(dist, 0o755)
	os.WriteFile(filepath.Join(dist, "artifacts.json"), []byte(`[
{"name":"gateway","path":"dist/gateway_linux_amd64_v1/gateway","goos":"linux","goarch":"amd64","type":"Binary","extra":{"Binary":"gateway","ID":"gateway"}},
{"name":"x.tar.gz","path":"dist/x.tar.gz","type":"Archive"},
{"name":"gateway","path":"dist/gateway_linux_arm64_v8.0/gateway","goos":"linux","goarch":"arm64","type":"Binary","extra":{"Binary":"gateway"}}]`), 0o644)
	got, err := Binaries(dist)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["gateway"]["linux/arm64"] != filepath.Join(dir, "dist/gateway_linux_arm64_v8.0/gateway") || len(got["gateway"]) != 2 {
		t.Errorf("%v", got)
	}
}

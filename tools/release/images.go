package release

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Image is one program's image, as the Dockerfile's stages make it for
// make images: the static binary alone, run as a user that is not root.
type Image struct {
	Program string
	Path    string   // where the binary is in the image
	Env     []string // the image's environment
}

// User is the image's user (and group): not root, as
// PodSecurity restricted and the Dockerfile ask.
const User = "65532:65532"

// Images are the programs a release publishes an image of: the five that
// make up the service, the trial runner's in-Pod agent, and the reference
// tool (showcase-replay on the PATH, as a tool's published image has it).
var Images = []Image{
	{Program: "gateway", Path: "/service"},
	{Program: "security-svc", Path: "/service"},
	{Program: "errors-svc", Path: "/service"},
	{Program: "conformance-svc", Path: "/service"},
	{Program: "performance-svc", Path: "/service"},
	{Program: "showcase-agent", Path: "/service"},
	{Program: "showcase-replay", Path: "/usr/local/bin/showcase-replay", Env: []string{"PATH=/usr/local/bin"}},
}

// Platforms are the platforms of every image.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}}

// Meta is what an image says of where it comes from (its OCI
// annotations and labels).
type Meta struct {
	Version  string    // vX.Y.Z
	Revision string    // the commit
	Created  time.Time // the commit's time: the same commit, the same image
	Source   string    // the repository's URL
}

// Binaries are the binaries goreleaser built, read from its
// dist/artifacts.json: program → "os/arch" → path.
func Binaries(dist string) (map[string]map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dist, "artifacts.json"))
	if err != nil {
		return nil, err
	}
	var arts []struct {
		Type, Path, Goos, Goarch string
		Extra                    struct{ Binary string }
	}
	if err := json.Unmarshal(data, &arts); err != nil {
		return nil, fmt.Errorf("artifacts.json: %w", err)
	}
	out := map[string]map[string]string{}
	for _, a := range arts {
		if a.Type != "Binary" {
			continue
		}
		if out[a.Extra.Binary] == nil {
			out[a.Extra.Binary] = map[string]string{}
		}
		p := a.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(dist), p)
		}
		out[a.Extra.Binary][a.Goos+"/"+a.Goarch] = p
	}
	return out, nil
}

// Index is the image index of im: one image per platform, each the
// binary for it in one layer on nothing (FROM scratch), nothing pulled.
// binaries maps "os/arch" to the binary's path.
func (im Image) Index(binaries map[string]string, meta Meta) (v1.ImageIndex, error) {
	annotations := map[string]string{
		"org.opencontainers.image.title":    im.Program,
		"org.opencontainers.image.version":  meta.Version,
		"org.opencontainers.image.revision": meta.Revision,
		"org.opencontainers.image.created":  meta.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":   meta.Source,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	var idx v1.ImageIndex = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pl := range Platforms {
		bin, ok := binaries[pl.OS+"/"+pl.Architecture]
		if !ok {
			return nil, fmt.Errorf("%s: no binary for %s/%s", im.Program, pl.OS, pl.Architecture)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		layerTar, err := im.layer(data, meta.Created)
		if err != nil {
			return nil, err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(layerTar)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), layer)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = pl.OS, pl.Architecture, pl.Variant
		cf.Created = v1.Time{Time: meta.Created.UTC()}
		cf.Author = "defect showcase"
		cf.Config = v1.Config{
			User:       User,
			Entrypoint: []string{im.Path},
			Env:        im.Env,
			Labels:     annotations,
		}
		if im.Path == "/service" {
			cf.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}, "9090/tcp": {}}
		}
		img, err = mutate.ConfigFile(img, cf)
		if err != nil {
			return nil, err
		}
		img = mutate.Annotations(img, annotations).(v1.Image)
		p := pl
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.Annotations(idx, annotations).(v1.ImageIndex), nil
}

// layer is the tar of the binary at im.Path, with its directories, owned
// by root and executable by anyone, timestamped created.
func (im Image) layer(bin []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := strings.Split(strings.Trim(filepath.Dir(im.Path), "/"), "/")
	for i := range dirs {
		if dirs[i] == "" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.Join(dirs[:i+1], "/") + "/", Mode: 0o755, ModTime: created, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(im.Path, "/"), Mode: 0o755, Size: int64(len(bin)), ModTime: created, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

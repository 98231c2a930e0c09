// Command showcase-image builds the release's images from the linux
// binaries goreleaser wrote (dist/artifacts.json) and pushes them: for
// each program one OCI image index of linux/amd64 and linux/arm64, each
// image the static binary alone on nothing (FROM scratch), run as
// 65532:65532, pulling nothing. It writes each image's CycloneDX SBOM
// beside the list of what it pushed, by digest, for cosign to sign and
// attest (make release-images, RELEASING.md).
//
//	showcase-image -dist dist -repo ghcr.io/defectshowcase -tag v0.1.0 [-insecure]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/defectshowcase/showcase/tools/release"
	"github.com/defectshowcase/showcase/tools/sbom"
)

func main() {
	dist := flag.String("dist", "dist", "goreleaser's output directory")
	repo := flag.String("repo", "", "where the images go: REGISTRY/NAMESPACE (an image is REPO/PROGRAM:TAG)")
	tag := flag.String("tag", "", "the images' tag: the release's version")
	insecure := flag.Bool("insecure", false, "the registry speaks plain HTTP (a registry on loopback)")
	source := flag.String("source", "https://github.com/defectshowcase/showcase", "the repository, for the images' org.opencontainers.image.source")
	out := flag.String("out", "", "the directory for images.txt (REPO/PROGRAM:TAG@DIGEST per line) and PROGRAM.cdx.json; default DIST/images")
	flag.Parse()
	if *repo == "" || *tag == "" {
		fmt.Fprintln(os.Stderr, "usage: showcase-image -dist DIR -repo REGISTRY/NAMESPACE -tag VERSION [-insecure]")
		os.Exit(2)
	}
	if *out == "" {
		*out = filepath.Join(*dist, "images")
	}
	if err := run(*dist, *repo, *tag, *source, *out, *insecure); err != nil {
		fmt.Fprintln(os.Stderr, "showcase-image:", err)
		os.Exit(1)
	}
}

func run(dist, repo, tag, source, out string, insecure bool) error {
	bins, err := release.Binaries(dist)
	if err != nil {
		return err
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return fmt.Errorf("git rev-parse: %w", err)
	}
	at, err := exec.Command("git", "log", "-1", "--format=%cI").Output()
	if err != nil {
		return err
	}
	created, err := time.Parse(time.RFC3339, strings.TrimSpace(string(at)))
	if err != nil {
		return err
	}
	meta := release.Meta{Version: tag, Revision: strings.TrimSpace(string(rev)), Created: created, Source: source}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	var pushed []string
	for _, im := range release.Images {
		idx, err := im.Index(bins[im.Program], meta)
		if err != nil {
			return err
		}
		ref, err := name.NewTag(repo+"/"+im.Program+":"+tag, opts...)
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(ref, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
		digest, err := idx.Digest()
		if err != nil {
			return err
		}
		pushed = append(pushed, ref.String()+"@"+digest.String())
		fmt.Println(ref.String() + "@" + digest.String())

		var files []sbom.File
		for _, pl := range release.Platforms {
			data, err := os.ReadFile(bins[im.Program][pl.OS+"/"+pl.Architecture])
			if err != nil {
				return err
			}
			files = append(files, sbom.File{Name: pl.OS + "/" + pl.Architecture + im.Path, Data: data})
		}
		bom, err := sbom.Of(ref.String(), files)
		if err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(out, im.Program+".cdx.json"))
		if err != nil {
			return err
		}
		err = sbom.Write(f, bom)
		f.Close()
		if err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(out, "images.txt"), []byte(strings.Join(pushed, "\n")+"\n"), 0o644)
}

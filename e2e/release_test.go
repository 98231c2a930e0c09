//go:build release

package e2e_test

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// The programs a release ships, in every archive.
var released = []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc",
	"showcase-score", "showcase-trials", "showcase-replay", "showcase-truth", "showcase-agent", "showcase-load"}

// A release rehearsed here as a user meets it, in a clone of this
// repository: make release-snapshot's archives, checksums and SBOMs
// (checkSnapshot); make release-images' multi-arch images pushed to a real
// registry on loopback, signed with cosign and their SBOMs attested
// (checkReleaseImages); make release-chart's OCI chart pushed there; and that
// chart installed from the registry on make kube-up's node, which pulls
// the images by digest (checkChartOnNode).
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every program for six platforms")
	}
	requireTool(t, "goreleaser")
	toolHomes(t)
	clone, version := releaseSnapshot(t)
	if !t.Run("snapshot", func(t *testing.T) { checkSnapshot(t, clone, version) }) {
		return
	}
	// The images' tag and the chart's version: a semver prerelease (g: a
	// commit all digits would be a number with a leading zero).
	tag := version + "-snapshot.g" + shortCommit(t, clone)
	reg := "127.0.0.1:" + freePort(t)
	regRoot := t.TempDir()
	startRegistry(t, reg, regRoot)
	var images map[string]string
	if !t.Run("images", func(t *testing.T) { images = checkReleaseImages(t, clone, reg, tag) }) {
		return
	}
	if len(images) != len(releasedImages) {
		t.Errorf("images pushed: %v", images)
	}
	if !t.Run("chart", func(t *testing.T) { checkChart(t, clone, reg, tag) }) {
		return
	}
	t.Run("the chart installed on the node from the registry", func(t *testing.T) { checkChartOnNode(t, reg, regRoot, tag, images) })
}

// releaseSnapshot runs make release-snapshot in a clone of the
// repository's HEAD; it returns the clone and the version main names.
func releaseSnapshot(t *testing.T) (clone, version string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	clone = filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--no-local", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v: %s", err, out)
	}
	cmd := exec.Command("make", "--no-print-directory", "release-snapshot")
	cmd.Dir = clone
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make release-snapshot: %v\n%s", err, tail(string(out), 4000))
	}
	return clone, strings.TrimSpace(runIn(t, clone, "go", "run", "./tools/cmd/showcase-release", "version"))
}

// checkSnapshot: an archive per platform (linux, darwin, windows on amd64
// and arm64) with every program built for it and LICENSE, README and
// CHANGELOG; the checksums of every archive and SBOM; a CycloneDX SBOM per
// archive that names each program with its hash and its modules; the
// version stamped in what -version prints.
func checkSnapshot(t *testing.T, clone, version string) {
	dist := filepath.Join(clone, "dist")

	sums := map[string]string{}
	checksums, err := filepath.Glob(filepath.Join(dist, "*_checksums.txt"))
	if err != nil || len(checksums) != 1 {
		t.Fatalf("checksums: %v %v", checksums, err)
	}
	f, err := os.Open(checksums[0])
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 2 {
			sums[fs[1]] = fs[0]
		}
	}
	f.Close()

	var platforms []string
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, goarch := range []string{"amd64", "arm64"} {
			platforms = append(platforms, goos+"/"+goarch)
			ext := ".tar.gz"
			if goos == "windows" {
				ext = ".zip"
			}
			matches, _ := filepath.Glob(filepath.Join(dist, "defect-showcase_*_"+goos+"_"+goarch+ext))
			if len(matches) != 1 {
				t.Errorf("%s/%s: archives %v", goos, goarch, matches)
				continue
			}
			archive := matches[0]
			if !strings.Contains(filepath.Base(archive), strings.TrimPrefix(version, "v")+"-snapshot") {
				t.Errorf("%s: not named for the snapshot of %s", archive, version)
			}
			data, err := os.ReadFile(archive)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256(data)
			if sums[filepath.Base(archive)] != hex.EncodeToString(h[:]) {
				t.Errorf("%s: sha256 %x, the checksums say %q", archive, h, sums[filepath.Base(archive)])
			}
			files := archiveFiles(t, archive, data)
			var names []string
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, doc := range []string{"LICENSE", "README.md", "CHANGELOG.md"} {
				if want, _ := os.ReadFile(filepath.Join(clone, doc)); !bytes.Equal(files[doc], want) {
					t.Errorf("%s: %s missing or not the repository's (files %v)", archive, doc, names)
				}
			}
			bom := readSBOM(t, archive)
			for _, prog := range released {
				name := prog
				if goos == "windows" {
					name += ".exe"
				}
				bin, ok := files[name]
				if !ok {
					t.Errorf("%s: no %s (files %v)", archive, name, names)
					continue
				}
				info, err := buildinfo.Read(bytes.NewReader(bin))
				if err != nil {
					t.Errorf("%s: %s: %v", archive, name, err)
					continue
				}
				settings := map[string]string{}
				for _, s := range info.Settings {
					settings[s.Key] = s.Value
				}
				if settings["GOOS"] != goos || settings["GOARCH"] != goarch || settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
					t.Errorf("%s: %s built with %v", archive, name, settings)
				}
				// The version -X stamped, as a string in the binary: the
				// build information keeps no -ldflags under -trimpath
				// (go.dev/issue/52372).
				if !bytes.Contains(bin, []byte(version+"-snapshot")) {
					t.Errorf("%s: %s not stamped with the version %s-snapshot…", archive, name, version)
				}
				sum := sha256.Sum256(bin)
				if !sbomNames(bom, name, hex.EncodeToString(sum[:]), info) {
					t.Errorf("%s: its SBOM does not name %s with its SHA-256 and modules", archive, name)
				}
			}
			if goos == runtime.GOOS && goarch == runtime.GOARCH {
				dir := t.TempDir()
				for _, prog := range []string{"gateway", "showcase-score"} {
					p := filepath.Join(dir, prog)
					if err := os.WriteFile(p, files[prog], 0o755); err != nil {
						t.Fatal(err)
					}
					out, err := exec.Command(p, "-version").CombinedOutput()
					if err != nil || !strings.Contains(string(out), version+"-snapshot") {
						t.Errorf("%s -version: %q %v, want %s-snapshot…", prog, out, err, version)
					}
				}
			}
		}
	}
	if len(sums) != len(platforms)+len(platforms) { // the archives and their SBOMs
		t.Errorf("the checksums list %d files, want %d archives and %d SBOMs: %v", len(sums), len(platforms), len(platforms), sums)
	}
}

func runIn(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// archiveFiles is an archive's regular files by their name below its
// top directory (or at its top, where it has none).
func archiveFiles(t *testing.T, name string, data []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	add := func(n string, r io.Reader) {
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		files[n[strings.LastIndex(n, "/")+1:]] = b
	}
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if f.Mode().IsRegular() {
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				add(f.Name, rc)
				rc.Close()
			}
		}
		return files
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			add(h.Name, tr)
		}
	}
	return files
}

func readSBOM(t *testing.T, archive string) *cdx.BOM {
	t.Helper()
	f, err := os.Open(archive + ".cdx.json")
	if err != nil {
		t.Fatalf("the SBOM of %s: %v", archive, err)
	}
	defer f.Close()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatalf("the SBOM of %s: %v", archive, err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion < cdx.SpecVersion1_5 || bom.Components == nil {
		t.Fatalf("the SBOM of %s: format %q, spec %v", archive, bom.BOMFormat, bom.SpecVersion)
	}
	return &bom
}

// sbomNames: the SBOM names the program with its SHA-256, and every
// module it was built from as a component it depends on.
func sbomNames(bom *cdx.BOM, name, sha string, info *buildinfo.BuildInfo) bool {
	var ref string
	for _, c := range *bom.Components {
		if c.Name == name && c.Hashes != nil && len(*c.Hashes) == 1 && (*c.Hashes)[0].Value == sha {
			ref = c.BOMRef
		}
	}
	if ref == "" || bom.Dependencies == nil {
		return false
	}
	for _, d := range *bom.Dependencies {
		if d.Ref != ref || d.Dependencies == nil {
			continue
		}
		got := map[string]bool{}
		for _, r := range *d.Dependencies {
			got[r] = true
		}
		for _, m := range info.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			if !got["pkg:golang/"+m.Path+"@"+m.Version] {
				return false
			}
		}
		return len(info.Deps) > 0
	}
	return false
}

// Package sbom writes the CycloneDX SBOM of a release archive: every Go
// program in it with the modules Go recorded in it (debug/buildinfo: the
// main module, each dependency at its version with its go.sum hash, the
// Go toolchain and the build's settings), and every other file, each with
// its SHA-256. It reads what the binaries say of themselves, as
// cyclonedx-gomod's bin mode and syft do, so the SBOM describes the
// archive's bytes and not a checkout; it is written with CycloneDX's own
// Go library.
package sbom

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// File is one regular file of an archive.
type File struct {
	Name string
	Data []byte
}

// ReadArchive is the regular files of a .tar.gz or a .zip.
func ReadArchive(name string) ([]File, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var files []File
	switch {
	case strings.HasSuffix(name, ".zip"):
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, err
		}
		for _, f := range zr.File {
			if !f.Mode().IsRegular() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
			files = append(files, File{f.Name, b})
		}
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		gz, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			files = append(files, File{h.Name, b})
		}
	default:
		return nil, fmt.Errorf("%s: want a .tar.gz or a .zip", name)
	}
	return files, nil
}

func sha(b []byte) *[]cdx.Hash {
	s := sha256.Sum256(b)
	return &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(s[:])}}
}

func purl(p, v string) string { return "pkg:golang/" + p + "@" + v }

// Of is the SBOM of an archive named name (its file name) of files.
func Of(name string, files []File) (*cdx.BOM, error) {
	bom := cdx.NewBOM()
	whole := sha256.New()
	for _, f := range files {
		whole.Write([]byte(f.Name))
		whole.Write(f.Data)
	}
	sum := whole.Sum(nil)
	// The same archive, the same serial number: the SBOM is reproducible.
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50 // a name-based UUID's version and variant bits
	u[8] = u[8]&0x3f | 0x80
	bom.SerialNumber = fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	bom.Metadata = &cdx.Metadata{
		Component: &cdx.Component{BOMRef: "archive", Type: cdx.ComponentTypeApplication, Name: path.Base(name)},
		Tools:     &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "showcase-sbom"}}},
	}
	var comps []cdx.Component
	var deps []cdx.Dependency
	modules := map[string]cdx.Component{}
	var archiveDeps []string
	for _, f := range files {
		info, err := buildinfo.Read(bytes.NewReader(f.Data))
		if err != nil { // not a Go program: a file
			ref := "file:" + f.Name
			comps = append(comps, cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeFile, Name: f.Name, Hashes: sha(f.Data)})
			archiveDeps = append(archiveDeps, ref)
			continue
		}
		ref := "program:" + f.Name
		props := []cdx.Property{{Name: "golang:toolchain", Value: info.GoVersion}, {Name: "golang:package", Value: info.Path}}
		for _, s := range info.Settings {
			props = append(props, cdx.Property{Name: "golang:build:" + s.Key, Value: s.Value})
		}
		comps = append(comps, cdx.Component{
			BOMRef: ref, Type: cdx.ComponentTypeApplication, Name: path.Base(f.Name),
			Version: info.Main.Version, Hashes: sha(f.Data), Properties: &props,
			PackageURL: purl(info.Main.Path, info.Main.Version),
		})
		archiveDeps = append(archiveDeps, ref)
		var uses []string
		for _, d := range info.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			mref := purl(d.Path, d.Version)
			if _, ok := modules[mref]; !ok {
				c := cdx.Component{BOMRef: mref, Type: cdx.ComponentTypeLibrary, Name: d.Path, Version: d.Version, PackageURL: mref}
				if d.Sum != "" {
					c.Properties = &[]cdx.Property{{Name: "golang:go.sum", Value: d.Sum}}
				}
				modules[mref] = c
			}
			uses = append(uses, mref)
		}
		sort.Strings(uses)
		deps = append(deps, cdx.Dependency{Ref: ref, Dependencies: &uses})
	}
	refs := make([]string, 0, len(modules))
	for r := range modules {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	for _, r := range refs {
		comps = append(comps, modules[r])
	}
	deps = append([]cdx.Dependency{{Ref: "archive", Dependencies: &archiveDeps}}, deps...)
	bom.Components = &comps
	bom.Dependencies = &deps
	return bom, nil
}

// Write encodes bom as CycloneDX JSON.
func Write(w io.Writer, bom *cdx.BOM) error {
	enc := cdx.NewBOMEncoder(w, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	return enc.Encode(bom)
}

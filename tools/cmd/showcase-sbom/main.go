// Command showcase-sbom writes the CycloneDX SBOM (JSON) of a release
// archive, a .tar.gz or a .zip: goreleaser runs it for each archive
// (.goreleaser.yaml).
//
//	showcase-sbom -o ARCHIVE.sbom.json ARCHIVE
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/defectshowcase/showcase/tools/sbom"
)

func main() {
	out := flag.String("o", "-", "where the SBOM goes (- for stdout)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: showcase-sbom [-o FILE] ARCHIVE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "showcase-sbom:", err)
		os.Exit(1)
	}
}

func run(archive, out string) error {
	files, err := sbom.ReadArchive(archive)
	if err != nil {
		return err
	}
	bom, err := sbom.Of(archive, files)
	if err != nil {
		return err
	}
	w := os.Stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return sbom.Write(w, bom)
}

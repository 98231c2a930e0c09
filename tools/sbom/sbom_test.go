package sbom

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The SBOM of an archive holding a program (showcase-sbom itself, built
// here) and a text file: the program with its SHA-256 and the modules it
// records, the file with its own; the same archive gives the same SBOM
// (its serial number too).
func TestOf(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "prog")
	if out, err := exec.Command("go", "build", "-o", prog, "../cmd/showcase-sbom").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bin, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	files := []File{{"d/prog", bin}, {"d/README.md", []byte("hello\n")}}
	a, err := Of("d.tar.gz", files)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Of("d.tar.gz", files)
	var ja, jb bytes.Buffer
	Write(&ja, a)
	Write(&jb, b)
	if ja.String() != jb.String() {
		t.Error("the same archive, two SBOMs")
	}
	var doc struct {
		BOMFormat, SpecVersion, SerialNumber string
		Components                           []struct {
			Type, Name, Purl string
			Hashes           []struct{ Alg, Content string }
		}
	}
	if err := json.Unmarshal(ja.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.BOMFormat != "CycloneDX" || !strings.HasPrefix(doc.SerialNumber, "urn:uuid:") || len(doc.SerialNumber) != len("urn:uuid:")+36 {
		t.Errorf("format %q, serial %q", doc.BOMFormat, doc.SerialNumber)
	}
	kinds := map[string]int{}
	for _, c := range doc.Components {
		kinds[c.Type]++
		if c.Name == "README.md" || c.Name == "d/README.md" {
			if len(c.Hashes) != 1 || c.Hashes[0].Content != "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" {
				t.Errorf("README's hash: %v", c.Hashes)
			}
		}
	}
	// cyclonedx-go, at least, is a module showcase-sbom is built from.
	var cdx bool
	for _, c := range doc.Components {
		cdx = cdx || (c.Type == "library" && strings.HasPrefix(c.Purl, "pkg:golang/github.com/CycloneDX/cyclonedx-go@v"))
	}
	if kinds["application"] != 1 || kinds["file"] != 1 || !cdx {
		t.Errorf("components by type: %v", kinds)
	}
	if _, err := ReadArchive("x.rar"); err == nil {
		t.Error("an archive of an unknown kind is read")
	}
}

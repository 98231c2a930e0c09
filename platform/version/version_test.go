package version

import (
	"strings"
	"testing"
)

// The version the build was given wins; without one the build's own
// record answers, never an empty string.
func TestString(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = ""
	if s := String(); s == "" || (!strings.HasPrefix(s, "(devel)") && !strings.HasPrefix(s, "v") && s != "(unknown)") {
		t.Errorf("without a given version: %q", s)
	}
	Version = "v9.9.9-test"
	if s := String(); s != "v9.9.9-test" {
		t.Errorf("given v9.9.9-test: %q", s)
	}
}

package e2e_test

import (
	"os"
	"testing"
)

// TestMain removes what the tests share across tests and leave outside the
// repository: the cover build (buildCover).
func TestMain(m *testing.M) {
	code := m.Run()
	if coverDir != "" {
		os.RemoveAll(coverDir)
	}
	os.Exit(code)
}

package catalogue

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		setting string
		want    string // the String of the set; "" wants an error
	}{
		{"", "all"}, {"all", "all"}, {" ALL ", "all"}, {"none", "none"}, {"None", "none"},
		{"SEC-01", "SEC-01"}, {"sec-01", "SEC-01"}, {"PERF-02, SEC-01", "SEC-01,PERF-02"},
		{"conformance", "CONF-01,CONF-02,CONF-03,CONF-04"}, {"response-conformance", "CONF-01,CONF-02,CONF-03,CONF-04"},
		{"errors,PERF-01", "ERR-01,ERR-02,ERR-03,PERF-01"}, {"internal-server-errors", "ERR-01,ERR-02,ERR-03"},
		{"security,errors,conformance,performance", "all"}, {"SEC-01,,ERR-01,", "SEC-01,ERR-01"},
		{"SEC-1", ""}, {"SEC-01,bogus", ""}, {"none,SEC-01", ""}, {"all,SEC-01", ""}, {",", ""}, {"SEC01", ""},
	} {
		s, err := Parse(tc.setting)
		if tc.want == "" {
			if err == nil {
				t.Errorf("Parse(%q) = %s, want an error", tc.setting, s)
			}
			continue
		}
		if err != nil || s.String() != tc.want {
			t.Errorf("Parse(%q) = %s, %v; want %s", tc.setting, s, err, tc.want)
			continue
		}
		if back, err := Parse(s.String()); err != nil || back != s {
			t.Errorf("Parse(%q) does not read back %s", s.String(), s)
		}
	}
}

func TestSet(t *testing.T) {
	t.Parallel()
	var zero Set
	if !zero.IsAll() || zero != All() || len(zero.ActiveIDs()) != len(Defects) {
		t.Fatal("the zero Set must be every defect active")
	}
	if n := len(None().ActiveIDs()); n != 0 {
		t.Fatalf("None has %d active", n)
	}
	for _, d := range Defects {
		s := All().Without(d.ID)
		for _, o := range Defects {
			if s.Active(o.ID) != (o.ID != d.ID) {
				t.Errorf("All without %s: %s active %v", d.ID, o.ID, s.Active(o.ID))
			}
		}
	}
}

// A Set is a flag's value: it reads and writes the setting.
func TestSetAsText(t *testing.T) {
	t.Parallel()
	var s Set
	if err := s.UnmarshalText([]byte("conformance")); err != nil || s.String() != "CONF-01,CONF-02,CONF-03,CONF-04" {
		t.Fatalf("%s %v", s, err)
	}
	if b, _ := s.MarshalText(); string(b) != s.String() {
		t.Fatalf("MarshalText %q", b)
	}
	if err := s.UnmarshalText([]byte("SEC-02")); err == nil || !strings.Contains(err.Error(), `"sec-02"`) {
		t.Fatalf("an unknown ID: %v", err)
	}
	if s.String() != "CONF-01,CONF-02,CONF-03,CONF-04" {
		t.Fatalf("a refused setting changed the set: %s", s)
	}
}

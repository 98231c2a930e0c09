package defects

import (
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/platform/server"
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
	if !zero.IsAll() || zero != All() || len(zero.ActiveIDs()) != len(Catalogue) {
		t.Fatal("the zero Set must be every defect active")
	}
	if n := len(None().ActiveIDs()); n != 0 {
		t.Fatalf("None has %d active", n)
	}
	for _, d := range Catalogue {
		s := All().Without(d.ID)
		for _, o := range Catalogue {
			if s.Active(o.ID) != (o.ID != d.ID) {
				t.Errorf("All without %s: %s active %v", d.ID, o.ID, s.Active(o.ID))
			}
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := server.NewEnv(func(k string) string { return map[string]string{"DEFECTS": "conformance"}[k] })
	if s := FromEnv(env); s.String() != "CONF-01,CONF-02,CONF-03,CONF-04" || env.Err() != nil {
		t.Fatalf("%s %v", s, env.Err())
	}
	env.Override("DEFECTS", "none") // the -defects flag
	if s := FromEnv(env); s != None() {
		t.Fatalf("the override was not read: %s", s)
	}
	env.Override("DEFECTS", "SEC-02")
	if s := FromEnv(env); s != All() || env.Err() == nil || !strings.Contains(env.Err().Error(), `DEFECTS="SEC-02"`) {
		t.Fatalf("an unknown ID: %s, %v", s, env.Err())
	}
}

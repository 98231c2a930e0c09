package contract

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/defectshowcase/showcase/catalogue"
)

// Each view changes only what it says, in both forms, whatever the base URL
// holds; the zero view is the declared contract byte for byte.
func TestViews(t *testing.T) {
	t.Parallel()
	declared, err := Declared()
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []catalogue.Set{catalogue.All(), catalogue.None()} {
		c, err := declared.For(set)
		if err != nil {
			t.Fatal(err)
		}
		views := c.Views()
		if got, err := views.Render(View{}, "http://x"); err != nil || !bytes.Equal(got.YAML, c.YAML) || !bytes.Equal(got.JSON, c.JSON) {
			t.Errorf("%s: the zero view is not the served contract", set)
		}
		for _, base := range []string{"http://127.0.0.1:8080", `http://h"x'y: z\u{0}/#<&>`, "https://showcase.example:8443/api"} {
			for _, view := range []View{{AbsoluteServer: true}, {DefinedSecurity: true}, {true, true}} {
				got, err := views.Render(view, base)
				if err != nil {
					t.Fatalf("%s %+v: %v", set, view, err)
				}
				var fromJSON, fromYAML map[string]any
				if err := json.Unmarshal(got.JSON, &fromJSON); err != nil {
					t.Fatalf("%s %+v JSON: %v", set, view, err)
				}
				if err := yaml.Unmarshal(got.YAML, &fromYAML); err != nil {
					t.Fatalf("%s %+v YAML: %v", set, view, err)
				}
				var want map[string]any
				_ = json.Unmarshal(c.JSON, &want)
				if view.DefinedSecurity {
					delete(want, "security")
				}
				if view.AbsoluteServer {
					want["servers"] = []any{map[string]any{"url": base}}
				}
				wantJSON, _ := json.Marshal(want)
				for form, doc := range map[string]map[string]any{"JSON": fromJSON, "YAML": fromYAML} {
					if b, _ := json.Marshal(doc); !bytes.Equal(b, wantJSON) {
						t.Errorf("%s %+v base %q: the %s form is not the contract with only the view's change", set, view, base, form)
					}
				}
			}
		}
	}
}

// Served with defects switched off, the contract no longer says that every
// endpoint carries one.
func TestDescriptionFollowsTheDefects(t *testing.T) {
	t.Parallel()
	declared, err := Declared()
	if err != nil {
		t.Fatal(err)
	}
	for set, want := range map[catalogue.Set]string{
		catalogue.None():                         "every planted defect switched off (DEFECTS=none)",
		catalogue.All().Without(catalogue.SEC01): "only these planted defects active: ERR-01,",
		catalogue.All():                          "each carry one deliberate defect",
	} {
		c, err := declared.For(set)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Info struct{ Description string } `json:"info"`
		}
		if err := json.Unmarshal(c.JSON, &doc); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc.Info.Description, want) || (set != catalogue.All() && strings.Contains(doc.Info.Description, "each carry one deliberate defect")) {
			t.Errorf("%s: %q", set, doc.Info.Description)
		}
	}
}

// The views are made at the first request for one, once, however many
// requests ask at the same time: every one gets the same bytes.
func TestViewsMadeOnceOnFirstUse(t *testing.T) {
	t.Parallel()
	declared, err := Declared()
	if err != nil {
		t.Fatal(err)
	}
	views := declared.Views()
	if views.byView != nil {
		t.Fatal("the views were made before anyone asked for one")
	}
	got := make([]*Contract, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i], _ = views.Render(View{DefinedSecurity: true}, "")
		})
	}
	wg.Wait()
	for i, c := range got {
		if c == nil || c != got[0] {
			t.Fatalf("request %d got %p, the first %p: not the one view made once", i, c, got[0])
		}
	}
}

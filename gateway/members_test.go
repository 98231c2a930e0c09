package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/defectshowcase/showcase/platform/reqparse"
)

// members reads an object exactly as reqparse.DecodeObject does: the same
// bodies are objects, with the same keys, each with its last value.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "a":"x\"y" } `, `{"\u00e9":true,"k\\":null}`,
		`[1]`, `"s"`, `{"a":}`, "{\"a\":\"\xff\"}", `{"a":{"b":{"c":[[]]}},"d":-1.5e3}`, ``, ` `, `{"":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, problem := reqparse.DecodeObject(body)
		got := map[string]json.RawMessage{}
		ok := members(body, func(k, v []byte) { got[string(k)] = append(json.RawMessage(nil), v...) })
		if ok != (problem == reqparse.BodyOK) {
			t.Fatalf("%q: members says %v, DecodeObject %v", body, ok, problem)
		}
		if !ok {
			return
		}
		if len(got) != len(obj) {
			t.Fatalf("%q: %d keys, DecodeObject %d", body, len(got), len(obj))
		}
		for k, v := range obj {
			var a, b bytes.Buffer
			if err := json.Compact(&a, v); err != nil {
				t.Fatal(err)
			}
			if err := json.Compact(&b, got[k]); err != nil {
				t.Fatalf("%q: %q's value %q: %v", body, k, got[k], err)
			}
			if a.String() != b.String() {
				t.Fatalf("%q: %q is %s, DecodeObject %s", body, k, b.String(), a.String())
			}
		}
	})
}

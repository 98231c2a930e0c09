package reqparse

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzQueryFirst(f *testing.F) {
	for _, s := range []string{"id=0", "id=%30&id=1", "a=1;b=2", "%ZZ=%", "id", "&&=&", "q=a+b%2B"} {
		f.Add(s, "id")
	}
	f.Fuzz(func(t *testing.T, query, name string) {
		v, ok := QueryFirst(query, name)
		if !utf8.ValidString(v) {
			t.Fatalf("QueryFirst(%q, %q) = %q: not UTF-8", query, name, v)
		}
		if !ok && v != "" {
			t.Fatalf("absent key with value %q", v)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", " +1_000 ", "٣", "１２", strings.Repeat("9", 4300), "1__0", "\u3000-5\x1c", "_", "0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseInt(s)
		if !ok {
			return
		}
		text := v.String()
		if back, ok := ParseInt(text); !ok || back.Cmp(v) != 0 {
			t.Fatalf("ParseInt(%q) = %s, which does not read back", s, text)
		}
		if len(strings.TrimPrefix(text, "-")) > MaxIntDigits {
			t.Fatalf("ParseInt(%q) has %d digits", s, len(text))
		}
	})
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[]`, ``, `{"a":`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":NaN}`, ` null `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, p := DecodeObject(body)
		switch p {
		case BodyOK:
			if obj == nil || !json.Valid(body) {
				t.Fatalf("accepted %q", body)
			}
			for _, v := range obj {
				_ = KindOf(v)
			}
		case BodyNotObject, BodyInvalidJSON:
			if obj != nil {
				t.Fatalf("problem %v with an object", p)
			}
		default:
			t.Fatalf("problem %v", p)
		}
	})
}

package reqparse

import (
	"strings"
	"testing"
	"unicode"
)

func TestQueryFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, query, name, want string
		ok                      bool
	}{
		{"a plain pair", "id=0", "id", "0", true},
		{"the first of repeated keys wins", "id=1&id=2", "id", "1", true},
		{"an absent key", "x=1", "id", "", false},
		{"an empty query", "", "id", "", false},
		{"a key without = has the empty value", "id", "id", "", true},
		{"a semicolon is part of the value", "id=0;x=1", "id", "0;x=1", true},
		{"a semicolon does not separate pairs", "x=1;id=0", "id", "", false},
		{"plus is a space", "q=a+b", "q", "a b", true},
		{"percent escapes decode", "id=%30", "id", "0", true},
		{"an escaped key matches", "%69d=7", "id", "7", true},
		{"a malformed escape is kept", "id=%ZZ", "id", "%ZZ", true},
		{"a truncated escape is kept", "id=1%2", "id", "1%2", true},
		{"empty pairs are skipped", "&&id=3&", "id", "3", true},
		{"invalid UTF-8 is replaced", "id=%FF", "id", "\uFFFD", true},
		{"case matters", "ID=0", "id", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, ok := QueryFirst(tt.query, tt.name)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("QueryFirst(%q, %q) = %q, %v; want %q, %v", tt.query, tt.name, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseInt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, in, want string // want "" means not an integer
	}{
		{"plain digits", "42", "42"},
		{"leading zeros", "007", "7"},
		{"a plus sign", "+5", "5"},
		{"a minus sign", "-5", "-5"},
		{"minus zero is zero", "-0", "0"},
		{"surrounding spaces", "  12\t\n", "12"},
		{"Unicode spaces", "\u00a012\u3000", "12"},
		{"information separators count as space", "\x1c12\x1f", "12"},
		{"single underscores between digits", "1_000_000", "1000000"},
		{"Arabic-Indic digits", "٤٢", "42"},
		{"fullwidth digits", "４２", "42"},
		{"mixed scripts", "4٢", "42"},
		{"beyond 64 bits", "123456789012345678901234567890", "123456789012345678901234567890"},
		{"4300 digits", strings.Repeat("9", 4300), strings.Repeat("9", 4300)},
		{"4301 digits", strings.Repeat("9", 4301), ""},
		{"4301 digits with leading zeros", "0" + strings.Repeat("9", 4300), ""},
		{"empty", "", ""},
		{"only spaces", "   ", ""},
		{"only a sign", "-", ""},
		{"a sign then a space", "- 5", ""},
		{"a space inside", "1 2", ""},
		{"a leading underscore", "_1", ""},
		{"a trailing underscore", "1_", ""},
		{"a double underscore", "1__0", ""},
		{"an underscore after the sign", "-_1", ""},
		{"a fraction", "1.5", ""},
		{"an exponent", "1e3", ""},
		{"hexadecimal", "0x10", ""},
		{"a superscript digit", "²", ""},
		{"a word", "ten", ""},
		{"two signs", "--1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			v, ok := ParseInt(tt.in)
			switch {
			case tt.want == "" && ok:
				t.Fatalf("ParseInt(%q) = %v, want not an integer", tt.in, v)
			case tt.want != "" && (!ok || v.String() != tt.want):
				t.Fatalf("ParseInt(%q) = %v, %v; want %s", tt.in, v, ok, tt.want)
			}
		})
	}
}

// Unicode lays out every decimal digit in runs of ten, zero first; the
// table-driven DigitValue depends on it, so check every run of the tables.
func TestDigitValue(t *testing.T) {
	t.Parallel()
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Fatalf("Nd range %#v is not whole runs of ten", rg)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Fatalf("Nd range %#v is not whole runs of ten", rg)
		}
	}
	tests := []struct {
		r    rune
		want int
		ok   bool
	}{
		{'0', 0, true}, {'9', 9, true}, {'٣', 3, true}, {'３', 3, true},
		{'۷', 7, true}, {'७', 7, true}, {'𝟗', 9, true}, {'𝟘', 0, true}, {'𝟿', 9, true},
		{'²', 0, false}, {'a', 0, false}, {'Ⅻ', 0, false}, {'½', 0, false}, {' ', 0, false},
	}
	for _, tt := range tests {
		got, ok := DigitValue(tt.r)
		if got != tt.want || ok != tt.ok {
			t.Errorf("DigitValue(%q) = %d, %v; want %d, %v", tt.r, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsJSONMediaType(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"application/json":                true,
		"Application/JSON":                true,
		"application/json; charset=utf-8": true,
		"application/merge-patch+json":    true,
		"application/vnd.api+json":        true,
		"":                                false,
		"text/plain":                      false,
		"application/jsonx":               false,
		"application/json-seq":            false,
		"text/json":                       false,
		"application/json; =broken":       false,
		"+json":                           false,
	} {
		if got := IsJSONMediaType(ct); got != want {
			t.Errorf("IsJSONMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestDecodeObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, body string
		want       BodyProblem
	}{
		{"an object", `{"a":1}`, BodyOK},
		{"an object with surrounding space", " \n{\"a\":1}\t", BodyOK},
		{"an empty object", `{}`, BodyOK},
		{"an array", `[1]`, BodyNotObject},
		{"a string", `"a"`, BodyNotObject},
		{"null", `null`, BodyNotObject},
		{"empty", ``, BodyInvalidJSON},
		{"only space", `   `, BodyInvalidJSON},
		{"truncated", `{"a":`, BodyInvalidJSON},
		{"trailing garbage", `{} {}`, BodyInvalidJSON},
		{"NaN", `{"a":NaN}`, BodyInvalidJSON},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", BodyInvalidJSON},
		{"an unquoted name", `{a: 1}`, BodyInvalidJSON},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if _, got := DecodeObject([]byte(tt.body)); got != tt.want {
				t.Fatalf("DecodeObject(%q) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
	obj, _ := DecodeObject([]byte(`{"a":"first","a":"last"}`))
	if string(obj["a"]) != `"last"` {
		t.Fatalf("a duplicate key keeps %s, want the last value", obj["a"])
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]JSONKind{
		`null`: KindNull, `true`: KindBool, `false`: KindBool, `-1.5e3`: KindNumber, `0`: KindNumber,
		`"x"`: KindString, `[]`: KindArray, `{}`: KindObject,
	} {
		if got := KindOf([]byte(raw)); got != want {
			t.Errorf("KindOf(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestParseStrictInt(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0": "0", "7": "7", "-7": "-7", "+7": "7", "007": "7", "-0": "0",
		"123456789012345678901234567890": "123456789012345678901234567890",
	} {
		if v, ok := ParseStrictInt(in); !ok || v.String() != want {
			t.Errorf("ParseStrictInt(%q) = %v, %v; want %s", in, v, ok, want)
		}
	}
	for _, in := range []string{"", "+", "-", " 7", "7 ", "1_0", "1.0", "1e3", "abc", "+-7", "-+7", "--7", "٣", "７", "0x10", strings.Repeat("9", MaxIntDigits+1)} {
		if v, ok := ParseStrictInt(in); ok {
			t.Errorf("ParseStrictInt(%q) = %v, want not an integer", in, v)
		}
	}
}

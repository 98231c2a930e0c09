package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"gopkg.in/yaml.v3"
)

// View is what a tool may ask of the served contract beyond the declared
// document, each to get past a part of the declared contract it cannot
// load. The zero View is the contract as declared, byte for byte.
type View struct {
	// AbsoluteServer: servers names the instance's absolute base URL
	// instead of "/" (nuclei builds its requests from it and cannot use a
	// relative one).
	AbsoluteServer bool
	// DefinedSecurity: the global security requirement naming the
	// undefined scheme api_key is left out (nuclei refuses a contract
	// that names a scheme it does not define); endpoint 1 keeps its own
	// requirement of ApiKeyAuth.
	DefinedSecurity bool
}

// Views are a contract in every view, each made once, so that serving one
// costs no more than the declared document does. The declared view is
// there from the start; the others are made at the first request for one
// (once, however many ask at the same time): most instances never serve
// them, and making them at start kept YAML's encoder in memory for nothing.
type Views struct {
	declared *Contract
	once     sync.Once
	byView   map[View]*Contract
	err      error
}

// serverPlaceholder stands for the base URL in a view with an absolute
// server until Render puts the request's there. It is a JSON string, and
// so also a YAML double-quoted scalar: what replaces it is one too.
const serverPlaceholder = `"https://public-base-url.invalid"`

// Views makes c's views; the views but the declared one are made when
// first asked for.
func (c *Contract) Views() *Views { return &Views{declared: c} }

// make makes the views.
func (v *Views) make() {
	v.byView, v.err = v.declared.views()
}

// views makes every view of c but the declared one.
func (c *Contract) views() (map[View]*Contract, error) {
	byView := map[View]*Contract{}
	for _, view := range []View{{AbsoluteServer: true}, {DefinedSecurity: true}, {AbsoluteServer: true, DefinedSecurity: true}} {
		var doc yaml.Node
		if err := yaml.Unmarshal(c.YAML, &doc); err != nil {
			return nil, err
		}
		root := doc.Content[0]
		if view.DefinedSecurity {
			removeKey(root, "security") // absent where DEFECTS switched SEC-01 off
		}
		if view.AbsoluteServer {
			var url string
			_ = json.Unmarshal([]byte(serverPlaceholder), &url)
			servers := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Value: "url"},
				{Kind: yaml.ScalarNode, Value: url, Style: yaml.DoubleQuotedStyle},
			}}}}
			if !setKey(root, "servers", servers) {
				return nil, fmt.Errorf("the contract has no servers")
			}
		}
		out, err := encode(&doc)
		if err != nil {
			return nil, err
		}
		byView[view] = out
	}
	return byView, nil
}

// Render is the view's contract with base as its server, when the view
// names one. It fails only if the contract cannot be put in the view (a
// contract with no servers).
func (v *Views) Render(view View, base string) (*Contract, error) {
	if view == (View{}) {
		return v.declared, nil
	}
	v.once.Do(v.make)
	if v.err != nil {
		return nil, v.err
	}
	c := v.byView[view]
	if !view.AbsoluteServer {
		return c, nil
	}
	quoted, _ := json.Marshal(base) // a string always encodes
	return &Contract{
		YAML: bytes.Replace(c.YAML, []byte(serverPlaceholder), quoted, 1),
		JSON: bytes.Replace(c.JSON, []byte(serverPlaceholder), quoted, 1),
	}, nil
}

func removeKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

func setKey(m *yaml.Node, key string, value *yaml.Node) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return true
		}
	}
	return false
}

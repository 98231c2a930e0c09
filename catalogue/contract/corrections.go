package contract

import (
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/defectshowcase/showcase/catalogue"
)

// correctionsYAML lists, per defect, the changes to the declared contract
// that its conformant variant needs.
//
//go:embed corrections.yaml
var correctionsYAML []byte

// change is one correction: remove what Pointer names, or set it to Value.
type change struct {
	Remove string    `yaml:"remove"`
	Set    string    `yaml:"set"`
	Value  yaml.Node `yaml:"value"`
}

// corrections reads the overlay; every defect of the catalogue must have an
// entry, even an empty one, so none is forgotten.
func corrections() (map[catalogue.ID][]change, error) {
	var byID map[catalogue.ID][]change
	if err := yaml.Unmarshal(correctionsYAML, &byID); err != nil {
		return nil, fmt.Errorf("corrections.yaml: %w", err)
	}
	for _, d := range catalogue.Defects {
		if _, ok := byID[d.ID]; !ok {
			return nil, fmt.Errorf("corrections.yaml: no entry for %s", d.ID)
		}
	}
	if len(byID) != len(catalogue.Defects) {
		return nil, fmt.Errorf("corrections.yaml: %d entries for %d defects", len(byID), len(catalogue.Defects))
	}
	return byID, nil
}

// For is the contract to serve with the given defects active: the declared
// one when all are, else the declared one with the corrections of every
// defect switched off.
func (c *Contract) For(set catalogue.Set) (*Contract, error) {
	if set.IsAll() {
		return c, nil
	}
	byID, err := corrections()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(c.YAML, &doc); err != nil {
		return nil, err
	}
	for _, d := range catalogue.Defects {
		if set.Active(d.ID) {
			continue
		}
		for _, ch := range byID[d.ID] {
			if err := ch.apply(&doc); err != nil {
				return nil, fmt.Errorf("corrections.yaml, %s: %w", d.ID, err)
			}
		}
	}
	// The declared description says every endpoint carries a defect.
	describe := change{Set: "/info/description", Value: yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: description(set)}}
	if err := describe.apply(&doc); err != nil {
		return nil, err
	}
	return encode(&doc)
}

// description is the contract's description for an instance where not
// every defect is active.
func description(set catalogue.Set) string {
	const what = "A target for automated API testing: ten endpoints in four categories (security, internal server errors, response conformance, performance). "
	if set.IsMutants() {
		// Never the seed: it names the set, and the contract is the tool's.
		return what + "This instance runs with the ten planted defects switched off and contract mutants planted in their place, drawn from a seed: which ones is the answer key's, on the instance's admin port."
	}
	if set == catalogue.None() {
		return what + "This instance runs with every planted defect switched off (DEFECTS=none): each endpoint does what this contract says, and a precise tool finds nothing."
	}
	return what + "This instance runs with only these planted defects active: " + strings.ReplaceAll(set.String(), ",", ", ") +
		" (DEFECTS=" + set.String() + "); the endpoints of the others do what this contract says."
}

// encode writes an edited document in both served forms.
func encode(doc *yaml.Node) (*Contract, error) {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	js, err := yamlToJSON(out.Bytes())
	if err != nil {
		return nil, err
	}
	return &Contract{YAML: out.Bytes(), JSON: js}, nil
}

func (ch change) apply(doc *yaml.Node) error {
	pointer, remove := ch.Set, false
	if ch.Remove != "" {
		pointer, remove = ch.Remove, true
	}
	if pointer == "" || (ch.Remove != "" && ch.Set != "") {
		return fmt.Errorf("a change needs exactly one of remove and set")
	}
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, p := range parts {
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
	}
	n := doc.Content[0]
	for _, p := range parts[:len(parts)-1] {
		if n = child(n, p); n == nil {
			return fmt.Errorf("%s: %q not found", pointer, p)
		}
	}
	last := parts[len(parts)-1]
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == last {
				if remove {
					n.Content = append(n.Content[:i], n.Content[i+2:]...)
				} else {
					n.Content[i+1] = &ch.Value
				}
				return nil
			}
		}
		if remove {
			return fmt.Errorf("%s: nothing to remove", pointer)
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: last}, &ch.Value)
		return nil
	case yaml.SequenceNode:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(n.Content) {
			return fmt.Errorf("%s: no element %q", pointer, last)
		}
		if remove {
			n.Content = append(n.Content[:i], n.Content[i+1:]...)
		} else {
			n.Content[i] = &ch.Value
		}
		return nil
	}
	return fmt.Errorf("%s: not a mapping or a sequence", pointer)
}

// child is the value under key p of a mapping, or element p of a sequence.
func child(n *yaml.Node, p string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(p); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

// Package coverage is API coverage as the instance measures it: the
// black-box coverage criteria of Martin-Lopez, Segura and Ruiz-Cortés ("Test
// Coverage Criteria for RESTful Web APIs", A-TEST 2019) that a server can see,
// counted per operation of the contract the instance serves, and the Test
// Coverage Level (TCL) they reach. The model (what there is to cover) is read
// from the contract; the gateway counts what its requests covered; the report
// types here are what it serves and what the scorer and the trials read.
package coverage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
)

// Model is what a contract offers to cover: its operations with their
// parameters, request content types, documented responses and their
// properties, in the contract's order.
type Model struct {
	Operations []Operation
}

// Operation is one operation of the contract.
type Operation struct {
	Method, Path, OperationID string
	// Parameters are the declared parameters (query, header, cookie, path)
	// and, for a JSON request body, its top-level properties (In "body");
	// the API key of an apiKey security scheme the operation requires is a
	// header or query parameter too.
	Parameters []Parameter
	// RequestTypes are the declared request body's media types; empty when
	// the operation declares no body.
	RequestTypes []string
	// Responses are the documented responses, by their key ("200", "4XX",
	// "default"), in the contract's order.
	Responses []Response
	// ResponseTypes are the media types of all its documented responses.
	ResponseTypes []string
}

// Parameter is a declared parameter or body property.
type Parameter struct {
	In, Name string
	// Values are the values it can take when it is an enum or a boolean:
	// a query, header or cookie value as sent, a body property's value as
	// compact JSON. Empty for any other type.
	Values []string
}

// Response is a documented response.
type Response struct {
	Status string // "200", "4XX" or "default"
	Types  []string
	// Properties are the top-level properties its JSON schema declares.
	Properties []string
}

// FromContract reads the model of an OpenAPI 3.0 document given as JSON.
// Paths are matched literally by the gateway: a templated path is refused.
func FromContract(doc []byte) (*Model, error) {
	var c struct {
		Security   []map[string][]string `json:"security"`
		Components struct {
			Schemas         map[string]json.RawMessage `json:"schemas"`
			Parameters      map[string]json.RawMessage `json:"parameters"`
			RequestBodies   map[string]json.RawMessage `json:"requestBodies"`
			Responses       map[string]json.RawMessage `json:"responses"`
			SecuritySchemes map[string]struct {
				Type, In, Name string
			} `json:"securitySchemes"`
		} `json:"components"`
		Paths json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &c); err != nil {
		return nil, fmt.Errorf("the contract: %w", err)
	}
	r := &resolver{schemas: c.Components.Schemas, parameters: c.Components.Parameters,
		requestBodies: c.Components.RequestBodies, responses: c.Components.Responses}
	paths, byPath, err := orderedObject(c.Paths)
	if err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	m := &Model{}
	for _, path := range paths {
		if strings.ContainsAny(path, "{}") {
			return nil, fmt.Errorf("%s: a templated path is not counted (the gateway matches paths literally)", path)
		}
		keys, item, err := orderedObject(byPath[path])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var shared []json.RawMessage
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("%s parameters: %w", path, err)
			}
		}
		for _, method := range keys {
			if !isMethod(method) {
				continue
			}
			op, err := r.operation(strings.ToUpper(method), path, item[method], shared, c.Security)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(method), path, err)
			}
			for _, req := range op.security {
				for name := range req {
					s, ok := c.Components.SecuritySchemes[name]
					// An undefined scheme (the declared contract's api_key) names no parameter.
					if ok && s.Type == "apiKey" && s.Name != "" && !op.has(s.In, s.Name) {
						op.Parameters = append(op.Parameters, Parameter{In: s.In, Name: s.Name})
					}
				}
			}
			m.Operations = append(m.Operations, op.Operation)
		}
	}
	return m, nil
}

func isMethod(k string) bool {
	switch k {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace":
		return true
	}
	return false
}

type resolver struct {
	schemas, parameters, requestBodies, responses map[string]json.RawMessage
}

// deref follows a local $ref into the components; anything else is raw.
func (r *resolver) deref(raw json.RawMessage) (json.RawMessage, error) {
	for range 16 {
		var ref struct {
			Ref string `json:"$ref"`
		}
		if json.Unmarshal(raw, &ref) != nil || ref.Ref == "" {
			return raw, nil
		}
		kind, name, ok := strings.Cut(strings.TrimPrefix(ref.Ref, "#/components/"), "/")
		table := map[string]map[string]json.RawMessage{"schemas": r.schemas, "parameters": r.parameters,
			"requestBodies": r.requestBodies, "responses": r.responses}[kind]
		next, found := table[name]
		if !ok || !found || !strings.HasPrefix(ref.Ref, "#/components/") {
			return nil, fmt.Errorf("$ref %s: not a component of the contract", ref.Ref)
		}
		raw = next
	}
	return nil, fmt.Errorf("$ref: more than 16 levels")
}

type schema struct {
	Type       string            `json:"type"`
	Enum       []json.RawMessage `json:"enum"`
	Properties json.RawMessage   `json:"properties"`
	AllOf      []json.RawMessage `json:"allOf"`
}

func (r *resolver) schema(raw json.RawMessage) (schema, error) {
	var s schema
	if len(raw) == 0 {
		return s, nil
	}
	raw, err := r.deref(raw)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(raw, &s)
}

// properties are a schema's top-level properties with their schemas, allOf
// merged, in the contract's order.
func (r *resolver) properties(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	s, err := r.schema(raw)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	props := map[string]json.RawMessage{}
	if len(s.Properties) > 0 {
		keys, byKey, err := orderedObject(s.Properties)
		if err != nil {
			return nil, nil, err
		}
		names = append(names, keys...)
		props = byKey
	}
	for _, part := range s.AllOf {
		keys, byKey, err := r.properties(part)
		if err != nil {
			return nil, nil, err
		}
		for _, k := range keys {
			if _, dup := props[k]; !dup {
				names = append(names, k)
				props[k] = byKey[k]
			}
		}
	}
	return names, props, nil
}

// mediaProperties are the top-level properties of a media type object's
// schema.
func (r *resolver) mediaProperties(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	var media struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(raw, &media); err != nil {
		return nil, nil, err
	}
	return r.properties(media.Schema)
}

// values are the values of an enum or boolean schema, each as text (query)
// or as compact JSON (body); nil for any other type.
func (r *resolver) values(raw json.RawMessage, asJSON bool) ([]string, error) {
	s, err := r.schema(raw)
	if err != nil {
		return nil, err
	}
	var out []string
	switch {
	case len(s.Enum) > 0:
		for _, v := range s.Enum {
			out = append(out, valueText(v, asJSON))
		}
	case s.Type == "boolean":
		out = []string{"true", "false"}
	}
	return out, nil
}

// valueText is an enum value as a client sends it: compact JSON in a body,
// the bare text in a query or header.
func valueText(v json.RawMessage, asJSON bool) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	if !asJSON {
		var s string
		if json.Unmarshal(buf.Bytes(), &s) == nil {
			return s
		}
	}
	return buf.String()
}

// op is an operation while it is read, with its security requirements.
type op struct {
	Operation
	security []map[string][]string
}

func (o *op) has(in, name string) bool {
	for _, p := range o.Parameters {
		if p.In == in && strings.EqualFold(p.Name, name) {
			return true
		}
	}
	return false
}

func (r *resolver) operation(method, path string, raw json.RawMessage, shared []json.RawMessage, global []map[string][]string) (*op, error) {
	var o struct {
		OperationID string                 `json:"operationId"`
		Parameters  []json.RawMessage      `json:"parameters"`
		RequestBody json.RawMessage        `json:"requestBody"`
		Responses   json.RawMessage        `json:"responses"`
		Security    *[]map[string][]string `json:"security"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	out := &op{Operation: Operation{Method: method, Path: path, OperationID: o.OperationID}, security: global}
	if o.Security != nil {
		out.security = *o.Security
	}
	// The operation's own parameters override the path's of the same name and place.
	for _, list := range [][]json.RawMessage{o.Parameters, shared} {
		for _, praw := range list {
			praw, err := r.deref(praw)
			if err != nil {
				return nil, err
			}
			var p struct {
				Name, In string
				Schema   json.RawMessage
			}
			if err := json.Unmarshal(praw, &p); err != nil {
				return nil, err
			}
			if out.has(p.In, p.Name) {
				continue
			}
			values, err := r.values(p.Schema, false)
			if err != nil {
				return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
			}
			out.Parameters = append(out.Parameters, Parameter{In: p.In, Name: p.Name, Values: values})
		}
	}
	if len(o.RequestBody) > 0 {
		body, err := r.deref(o.RequestBody)
		if err != nil {
			return nil, err
		}
		var rb struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(body, &rb); err != nil {
			return nil, err
		}
		types, byType, err := orderedObject(rb.Content)
		if err != nil {
			return nil, fmt.Errorf("requestBody: %w", err)
		}
		for _, t := range types {
			out.RequestTypes = append(out.RequestTypes, MediaType(t))
			if !IsJSON(t) {
				continue
			}
			names, props, err := r.mediaProperties(byType[t])
			if err != nil {
				return nil, fmt.Errorf("requestBody: %w", err)
			}
			for _, n := range names {
				if out.has("body", n) {
					continue
				}
				values, err := r.values(props[n], true)
				if err != nil {
					return nil, fmt.Errorf("requestBody %s: %w", n, err)
				}
				out.Parameters = append(out.Parameters, Parameter{In: "body", Name: n, Values: values})
			}
		}
	}
	statuses, byStatus, err := orderedObject(o.Responses)
	if err != nil {
		return nil, fmt.Errorf("responses: %w", err)
	}
	for _, status := range statuses {
		if !validResponseKey(status) {
			return nil, fmt.Errorf("responses: %q is not a status, a range or default", status)
		}
		resp, err := r.deref(byStatus[status])
		if err != nil {
			return nil, err
		}
		var rv struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(resp, &rv); err != nil {
			return nil, err
		}
		doc := Response{Status: status}
		if status != "default" {
			doc.Status = strings.ToUpper(status) // 4xx is 4XX
		}
		if len(rv.Content) > 0 {
			types, byType, err := orderedObject(rv.Content)
			if err != nil {
				return nil, fmt.Errorf("responses %s: %w", status, err)
			}
			for _, t := range types {
				mt := MediaType(t)
				doc.Types = append(doc.Types, mt)
				if !contains(out.ResponseTypes, mt) {
					out.ResponseTypes = append(out.ResponseTypes, mt)
				}
				if !IsJSON(t) {
					continue
				}
				names, _, err := r.mediaProperties(byType[t])
				if err != nil {
					return nil, fmt.Errorf("responses %s: %w", status, err)
				}
				for _, n := range names {
					if !contains(doc.Properties, n) {
						doc.Properties = append(doc.Properties, n)
					}
				}
			}
		}
		out.Responses = append(out.Responses, doc)
	}
	return out, nil
}

func validResponseKey(k string) bool {
	if k == "default" {
		return true
	}
	if len(k) != 3 || k[0] < '1' || k[0] > '5' {
		return false
	}
	if strings.EqualFold(k[1:], "XX") {
		return true
	}
	_, err := strconv.Atoi(k)
	return err == nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// orderedObject reads a JSON object's keys in their order, and its values.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, map[string]json.RawMessage{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("want an object")
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := values[k]; !dup {
			keys = append(keys, k)
		}
		values[k] = v
	}
	return keys, values, nil
}

// MediaType is a Content-Type value's media type, lower case, without
// parameters: what the criteria compare. An empty value is "", one that
// does not parse is "(invalid)", and one longer than 100 bytes is cut.
func MediaType(v string) string {
	if plainMediaType(v) {
		return v // what ParseMediaType would make of it, without its cost
	}
	if strings.TrimSpace(v) == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return Invalid
	}
	if len(mt) > maxMediaType {
		mt = mt[:maxMediaType]
	}
	return mt
}

// plainMediaType reports whether v is already what MediaType makes of it:
// a lower-case type/subtype of token characters, no parameters, no space,
// within maxMediaType ("application/json", as nearly every answer has it).
func plainMediaType(v string) bool {
	slash := strings.IndexByte(v, '/')
	if slash <= 0 || slash == len(v)-1 || len(v) > maxMediaType {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i == slash:
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Invalid stands for a Content-Type that does not parse.
const Invalid = "(invalid)"

const maxMediaType = 100

// IsJSON reports whether a media type is JSON: application/json or a
// +json suffix (as the services read a body).
func IsJSON(v string) bool {
	mt := MediaType(v)
	return mt == "application/json" || (strings.HasSuffix(mt, "+json") && strings.Contains(mt, "/"))
}

// Matches reports which documented response a status falls under: its own
// code, else its range (4XX), else default; ok is false when none documents it.
func (o *Operation) Matches(status int) (i int, ok bool) {
	code, class := strconv.Itoa(status), fmt.Sprintf("%dXX", status/100)
	def := -1
	for _, key := range []string{code, class} {
		for i, r := range o.Responses {
			if r.Status == key {
				return i, true
			}
		}
	}
	for i, r := range o.Responses {
		if r.Status == "default" {
			def = i
		}
	}
	return def, def >= 0
}

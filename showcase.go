// Package showcase holds the two documents of the repository's root that the
// programs serve: the declared contract, openapi.yaml, and the README. They
// are embedded from here, where they live, so there is no copy to keep in
// step. The facts about the endpoints and their defects are in the
// catalogue package.
package showcase

import _ "embed"

// OpenAPI is the declared contract, openapi.yaml, byte for byte.
//
//go:embed openapi.yaml
var OpenAPI []byte

// README is the repository's README.md, which the gateway serves for people.
//
//go:embed README.md
var README []byte

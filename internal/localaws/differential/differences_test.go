package differential_test

import (
	"bytes"
	_ "embed"
	"fmt"

	"gopkg.in/yaml.v3"
)

// decisionsYAML decides every difference between the local stack and
// moto; docs/localaws-differences.md is rendered from it, and its verdicts
// and sources are checked, by TestDifferentialTableDoc.
//
//go:embed testdata/decisions.yaml
var decisionsYAML []byte

var differences = mustDecisions(decisionsYAML)

// mustDecisions reads the decisions, and panics (failing every test of the
// package) on a malformed file or an unknown field.
func mustDecisions(doc []byte) []decision {
	var ds []decision
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&ds); err != nil {
		panic(fmt.Sprintf("testdata/decisions.yaml: %v", err))
	}
	return ds
}

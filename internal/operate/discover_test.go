package operate

import "testing"

// A pipeline is found by its relay function's name; other functions of the
// account are not pipelines.
func TestPipelineOf(t *testing.T) {
	for function, want := range map[string]string{
		"orders-relay":            "orders",
		"orders-relay-relay":      "orders-relay",
		"orders-reconciler":       "",
		"-relay":                  "",
		"billing-relay-extension": "",
	} {
		got, ok := pipelineOf(function)
		if got != want || ok != (want != "") {
			t.Errorf("pipelineOf(%q) = %q, %v; want %q", function, got, ok, want)
		}
	}
}

package iamdifferential

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// installHint is the command that installs node and iam-simulate.
const installHint = "make clients (scripts/install-clients.sh: npm ci in internal/localaws/iamdifferential/js)"

// simCase is one case as js/simulate.mjs reads it.
type simCase struct {
	IdentityPolicies []json.RawMessage `json:"identityPolicies"`
	Boundary         json.RawMessage   `json:"boundary,omitempty"`
	ResourcePolicy   json.RawMessage   `json:"resourcePolicy,omitempty"`
	Principal        string            `json:"principal"`
	Action           string            `json:"action"`
	Resource         string            `json:"resource"`
	ResourceAccount  string            `json:"resourceAccount"`
	Context          map[string]any    `json:"context,omitempty"`
}

// simResult is iam-simulate's answer for one case: a decision (Allowed,
// ExplicitlyDenied, ImplicitlyDenied) or the error refusing the case.
type simResult struct {
	Decision string `json:"decision"`
	Error    string `json:"error"`
}

// simulate runs every case through iam-simulate in one Node process. It
// fails the test, naming the install command, when node or the package is
// missing.
func simulate(t *testing.T, cases []simCase) []simResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: install it with %s", installHint)
	}
	dir, err := filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@cloud-copilot", "iam-simulate", "package.json")); err != nil {
		t.Fatalf("@cloud-copilot/iam-simulate is not installed in %s: run %s", dir, installHint)
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, "simulate.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("node simulate.mjs: %v\n%s", err, stderr.String())
		}
		t.Fatalf("node simulate.mjs: %v", err)
	}
	var out []simResult
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node simulate.mjs wrote no JSON list: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if len(out) != len(cases) {
		t.Fatalf("node simulate.mjs answered %d cases of %d", len(out), len(cases))
	}
	return out
}

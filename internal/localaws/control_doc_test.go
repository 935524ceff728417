package localaws_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestControlRoutesDocumented checks that the README's control API table
// lists every control route the stack registers, so that the table cannot
// fall behind the code.
func TestControlRoutesDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := localawstest.Start(t)
	routes := s.Router().Control().Routes()
	if len(routes) < 10 {
		t.Fatalf("only %d control routes registered: %v", len(routes), routes)
	}
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		// The table writes "`GET mappings/status[?uuid=…]`" or
		// "`DELETE faults`, `DELETE faults/{id}`".
		if !strings.Contains(string(readme), "`"+method+" "+path) {
			t.Errorf("README.md's control API table does not list %s %s", method, path)
		}
	}
}

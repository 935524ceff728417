package operate

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// The command reaches the stack through --endpoint-url and the standard
// credential chain, and says which component is missing and what to check.
func TestLocalUnknownPipelineThroughEndpointURL(t *testing.T) {
	stack := localawstest.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALADMIN")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "localadminsecret")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	var out, errOut bytes.Buffer
	cli := &CLI{Stdout: &out, Stderr: &errOut}
	code := cli.Run(context.Background(), []string{"status", "nosuch", "--endpoint-url", stack.Endpoint(), "--region", stack.Options().Region})
	if code != ExitStuck || !strings.Contains(errOut.String(), "relay function nosuch-relay does not exist") || !strings.Contains(errOut.String(), "--region") {
		t.Errorf("status of an unknown pipeline: exit %d, stderr %q", code, errOut.String())
	}
}

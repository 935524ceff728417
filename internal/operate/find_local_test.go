package operate

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsclient/awsclienttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// The command reaches the stack through --endpoint-url and the standard
// credential chain, and says which component is missing and what to check.
func TestLocalUnknownPipelineThroughEndpointURL(t *testing.T) {
	stack := localawstest.Start(t)
	awsclienttest.Isolate(t, map[string]string{"AWS_ACCESS_KEY_ID": "AKIDLOCALADMIN", "AWS_SECRET_ACCESS_KEY": "localadminsecret"})
	var out, errOut bytes.Buffer
	cli := &CLI{Stdout: &out, Stderr: &errOut}
	code := cli.Run(context.Background(), []string{"status", "nosuch", "--endpoint-url", stack.Endpoint(), "--region", stack.Options().Region})
	if code != ExitNotFound || !strings.Contains(errOut.String(), "relay function nosuch-relay does not exist") || !strings.Contains(errOut.String(), "--region") {
		t.Errorf("status of an unknown pipeline: exit %d, stderr %q", code, errOut.String())
	}
}

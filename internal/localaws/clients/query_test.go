package clients

import (
	"path/filepath"
	"testing"
)

// TestQueryProtocol drives SQS and CloudWatch with Debian's boto3 and AWS
// CLI, which speak the awsQuery (XML) protocol to both.
func TestQueryProtocol(t *testing.T) {
	requirePython(t)
	requireAWSCLI(t)
	endpoint := startLocalaws(t)
	t.Run("boto3", func(t *testing.T) {
		t.Parallel()
		out := run(t, root, clientEnv(endpoint), debianPython, filepath.Join(root, "internal/localaws/clients/python/query_protocol.py"))
		expectOutput(t, out, "query protocol ok", 1)
	})
	t.Run("awscli", func(t *testing.T) {
		t.Parallel()
		out := run(t, root, clientEnv(endpoint, "AWS_CLI="+debianAWS), "bash", filepath.Join(root, "internal/localaws/clients/sh/query_protocol.sh"))
		expectOutput(t, out, "query protocol ok", 1)
	})
}

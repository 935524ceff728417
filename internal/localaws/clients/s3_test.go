package clients

import (
	"path/filepath"
	"testing"
)

// TestS3 drives S3 with Debian's AWS CLI: s3api calls and `aws s3 cp`,
// whose large files go up in a multipart upload and down in ranged GETs.
func TestS3(t *testing.T) {
	requireAWSCLI(t)
	endpoint := startLocalaws(t)
	out := run(t, root, clientEnv(endpoint, "AWS_CLI="+debianAWS), "bash", filepath.Join(root, "internal/localaws/clients/sh/s3.sh"))
	expectOutput(t, out, "s3 ok", 1)
}

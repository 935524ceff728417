package s3

import (
	"errors"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// authorize decides a request on resource: an explicit Deny of the
// bucket's policy refuses it, whoever calls (the account's root keeps the
// policy operations, as on AWS, so that a policy cannot lock its owner
// out); otherwise the caller's identity policies decide, their conditions
// tested on the same condition keys (s3:prefix).
func (s *Service) authorize(req *awsapi.Request, b *bucket, action, resource string) error {
	ownerKeepsPolicy := req.Principal.Admin && strings.HasSuffix(action, "BucketPolicy")
	if b != nil && b.policy != "" && !ownerKeepsPolicy {
		d := iampolicy.EvaluateResource(b.policy, iampolicy.Request{
			Action: action, Resource: resource, PrincipalArn: req.Principal.ARN, Context: conditionKeys(req),
		})
		if d == iampolicy.Deny {
			return errAccessDenied("User: " + req.Principal.ARN + " is not authorized to perform: " + action +
				" on resource: \"" + resource + "\" with an explicit deny in a resource-based policy")
		}
	}
	err := req.AuthorizeContext(action, resource, conditionKeys(req))
	var e *awsapi.Error
	if errors.As(err, &e) && e.Code == "AccessDeniedException" {
		return errAccessDenied(e.Message)
	}
	return err
}

// conditionKeys are the request's condition keys a bucket policy may test:
// aws:SecureTransport (see the package documentation) and the server-side
// encryption headers.
func conditionKeys(req *awsapi.Request) map[string]string {
	keys := map[string]string{"aws:securetransport": "true"}
	if r := req.HTTP; r != nil {
		if r.TLS == nil && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "http") {
			keys["aws:securetransport"] = "false"
		}
		for _, h := range []string{"x-amz-server-side-encryption", "x-amz-server-side-encryption-aws-kms-key-id"} {
			if v := r.Header.Get(h); v != "" {
				keys["s3:"+h] = v
			}
		}
		if p := r.URL.Query().Get("prefix"); p != "" {
			keys["s3:prefix"] = p
		}
	}
	return keys
}

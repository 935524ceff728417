package iam

import (
	"net/url"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// A permissions boundary is a managed policy that caps what a role's
// identity-based policies can grant: an action is allowed only when both
// allow it, and an explicit deny in either denies it ("Permissions
// boundaries for IAM entities", IAM user guide).

type xmlBoundary struct {
	PermissionsBoundaryType string `xml:"PermissionsBoundaryType"`
	PermissionsBoundaryArn  string `xml:"PermissionsBoundaryArn"`
}

func (r *role) boundaryXML() *xmlBoundary {
	if r.boundary == "" {
		return nil
	}
	return &xmlBoundary{PermissionsBoundaryType: "PermissionsBoundaryPolicy", PermissionsBoundaryArn: r.boundary}
}

// checkBoundary reports a boundary ARN that names no managed policy.
// Callers hold s.mu.
func (s *Service) checkBoundary(arn string) *awsapi.Error {
	if _, ok := s.policies[arn]; !ok {
		return awsapi.NewError("NoSuchEntity", "Scope ARN: %s does not exist or is not attachable.", arn)
	}
	return nil
}

// boundaryDocs is the boundary's document as a snapshot holds it: nil
// without a boundary. Callers hold s.mu.
func (s *Service) boundaryDocs(r *role) []string {
	if r.boundary == "" {
		return nil
	}
	if p := s.policies[r.boundary]; p != nil {
		return []string{p.document}
	}
	return []string{} // a boundary whose policy is gone allows nothing
}

// boundaryUsage counts the roles whose boundary is arn. Callers hold s.mu.
func (s *Service) boundaryUsage(arn string) int {
	n := 0
	for _, r := range s.roles {
		if r.boundary == arn {
			n++
		}
	}
	return n
}

func (s *Service) putRolePermissionsBoundary(f url.Values, r *role) (any, error) {
	arn := f.Get("PermissionsBoundary")
	if err := s.checkBoundary(arn); err != nil {
		return nil, err
	}
	r.boundary = arn
	s.touch(r)
	return nil, nil
}

func (s *Service) deleteRolePermissionsBoundary(_ url.Values, r *role) (any, error) {
	if r.boundary == "" {
		return nil, noSuchEntity("The role with name %s does not have a permissions boundary.", r.name)
	}
	r.boundary = ""
	s.touch(r)
	return nil, nil
}

// boundaryDecision evaluates the boundary of a snapshot: nil docs mean no
// boundary (nothing capped).
func boundaryDecision(docs []string, req iampolicy.Request) (iampolicy.Decision, bool) {
	if docs == nil {
		return iampolicy.Allow, false
	}
	return iampolicy.Evaluate(docs, req), true
}

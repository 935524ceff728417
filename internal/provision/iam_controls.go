package provision

import (
	"context"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// IAMSpec applies to every role of the pipeline.
type IAMSpec struct {
	// PermissionsBoundary is the ARN of a managed policy set as the
	// permissions boundary of every role; empty sets none.
	PermissionsBoundary string
	// Path of every role; default "/". IAM cannot move a role: a new path
	// recreates the roles (the functions and the schedule switch to them).
	Path string
}

var (
	policyARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:iam::(\d{12}|aws):policy/[\x21-\x7E]+$`)
	iamPathPattern   = regexp.MustCompile(`^/([\x21-\x7E]*/)?$`)
)

func (i IAMSpec) validate() error {
	if i.PermissionsBoundary != "" && !policyARNPattern.MatchString(i.PermissionsBoundary) {
		return invalid("IAM.PermissionsBoundary", `use the ARN of a managed policy such as "arn:aws:iam::123456789012:policy/boundary"`, "is %q", i.PermissionsBoundary)
	}
	if len(i.Path) > 512 || !iamPathPattern.MatchString(i.Path) {
		return invalid("IAM.Path", `use a path that begins and ends with "/", such as "/outbox/", of at most 512 characters`, "is %q", i.Path)
	}
	return nil
}

func roleBoundary(r *iamtypes.Role) string {
	if r == nil || r.PermissionsBoundary == nil {
		return ""
	}
	return aws.ToString(r.PermissionsBoundary.PermissionsBoundaryArn)
}

// roleControlsDiff lists how the role differs from the IAM spec.
func roleControlsDiff(i IAMSpec, r *iamtypes.Role) []string {
	var diff []string
	if aws.ToString(r.Path) != i.Path {
		diff = append(diff, "path")
	}
	if roleBoundary(r) != i.PermissionsBoundary {
		diff = append(diff, "permissions_boundary")
	}
	return diff
}

// syncBoundary brings the role's permissions boundary to the spec's.
func (c *Provisioner) syncBoundary(ctx context.Context, name string, i IAMSpec, r *iamtypes.Role) error {
	switch have := roleBoundary(r); {
	case have == i.PermissionsBoundary:
		return nil
	case i.PermissionsBoundary == "":
		_, err := c.IAM.DeleteRolePermissionsBoundary(ctx, &iam.DeleteRolePermissionsBoundaryInput{RoleName: aws.String(name)})
		return err
	default:
		_, err := c.IAM.PutRolePermissionsBoundary(ctx, &iam.PutRolePermissionsBoundaryInput{RoleName: aws.String(name), PermissionsBoundary: aws.String(i.PermissionsBoundary)})
		if err != nil {
			return fmt.Errorf("setting the permissions boundary %s: %w", i.PermissionsBoundary, err)
		}
		return nil
	}
}

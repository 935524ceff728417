package provision

import (
	"context"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// roleSpec is one role of the pipeline with its single inline policy.
type roleSpec struct {
	what       string // "relay role", for errors
	name       string
	service    string // the principal that assumes it
	policyName string
	policy     PolicyDocument
	tags       map[string]string
	iam        IAMSpec
	// sourceAccount, when set, restricts the trust policy to requests on
	// behalf of that account (EventBridge Scheduler's confused-deputy
	// guard). Lambda execution roles carry no condition.
	sourceAccount string
}

// ensureRole creates the role or brings its trust policy, inline policy and
// tags to the desired ones. known says whether the State records the role:
// an unrecorded role of the same name is someone else's.
func (c *Provisioner) ensureRole(ctx context.Context, r roleSpec, known bool) (string, error) {
	trust := TrustPolicy(r.service, r.sourceAccount).JSON()
	if r.iam.Path == "" {
		r.iam.Path = "/"
	}
	out, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(r.name)})
	if err == nil && known && aws.ToString(out.Role.Path) != r.iam.Path {
		// IAM cannot move a role to another path: it is recreated there.
		if err := c.deleteRole(ctx, r.what, r.name); err != nil {
			return "", err
		}
		out, err = nil, &iamtypes.NoSuchEntityException{Message: aws.String("moved")}
	}
	switch {
	case awsops.IsNotFound(err):
		in := &iam.CreateRoleInput{
			RoleName:                 aws.String(r.name),
			Path:                     aws.String(r.iam.Path),
			AssumeRolePolicyDocument: aws.String(trust),
			Description:              aws.String("Outbox pipeline " + r.what),
			Tags:                     iamTags(r.tags),
		}
		if r.iam.PermissionsBoundary != "" {
			in.PermissionsBoundary = aws.String(r.iam.PermissionsBoundary)
		}
		created, err := c.IAM.CreateRole(ctx, in)
		if err != nil {
			return "", fmt.Errorf("creating %s (%s): %w", r.what, r.name, err)
		}
		out = &iam.GetRoleOutput{Role: created.Role}
	case err != nil:
		return "", fmt.Errorf("reading %s (%s): %w", r.what, r.name, err)
	case !known:
		return "", fmt.Errorf("creating %s (%s): a role of that name already exists: delete it or choose another pipeline name", r.what, r.name)
	default:
		if have := decodePolicy(aws.ToString(out.Role.AssumeRolePolicyDocument)); !awsops.SamePolicy(have, trust) {
			if _, err := c.IAM.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(r.name), PolicyDocument: aws.String(trust)}); err != nil {
				return "", fmt.Errorf("updating %s (%s) trust policy: %w", r.what, r.name, err)
			}
		}
		if err := c.syncRoleTags(ctx, r.name, out.Role.Tags, r.tags); err != nil {
			return "", fmt.Errorf("tagging %s (%s): %w", r.what, r.name, err)
		}
		if err := c.syncBoundary(ctx, r.name, r.iam, out.Role); err != nil {
			return "", fmt.Errorf("updating %s (%s): %w", r.what, r.name, err)
		}
	}
	if _, err := c.IAM.PutRolePolicy(ctx, &iam.PutRolePolicyInput{
		RoleName: aws.String(r.name), PolicyName: aws.String(r.policyName), PolicyDocument: aws.String(r.policy.JSON()),
	}); err != nil {
		return aws.ToString(out.Role.Arn), fmt.Errorf("putting %s (%s) policy %s: %w", r.what, r.name, r.policyName, err)
	}
	return aws.ToString(out.Role.Arn), nil
}

// roleAndPolicy is a role and its inline policy document, "" when the
// policy does not exist.
type roleAndPolicy struct {
	role *iamtypes.Role
	doc  string
}

// rolePolicy returns the role with its inline policy document, or a
// NotFoundError when the role does not exist.
func (c *Provisioner) rolePolicy(ctx context.Context, role, policy string) (roleAndPolicy, error) {
	got, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)})
	if err != nil {
		return roleAndPolicy{}, awsops.NotFound("role", role, err)
	}
	out, err := c.IAM.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(policy)})
	if awsops.IsNotFound(err) {
		return roleAndPolicy{role: got.Role}, nil
	}
	if err != nil {
		return roleAndPolicy{role: got.Role}, err
	}
	return roleAndPolicy{role: got.Role, doc: decodePolicy(aws.ToString(out.PolicyDocument))}, nil
}

// decodePolicy undoes the URL encoding of documents returned by IAM.
func decodePolicy(doc string) string {
	if d, err := url.QueryUnescape(doc); err == nil {
		return d
	}
	return doc
}

func iamTags(tags map[string]string) []iamtypes.Tag {
	return awsops.TagList(tags, func(k, v *string) iamtypes.Tag { return iamtypes.Tag{Key: k, Value: v} })
}

func (c *Provisioner) syncRoleTags(ctx context.Context, role string, current []iamtypes.Tag, want map[string]string) error {
	have := awsops.TagMap(current, func(t iamtypes.Tag) (*string, *string) { return t.Key, t.Value })
	return awsops.SyncTags(ctx, have, want, func(ctx context.Context, keys []string) error {
		_, err := c.IAM.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String(role), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := c.IAM.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String(role), Tags: iamTags(set)})
		return err
	})
}

// deleteRole deletes the role and its inline policies; a role already gone
// is not an error.
func (c *Provisioner) deleteRole(ctx context.Context, what, role string) error {
	if role == "" {
		return nil
	}
	p := iam.NewListRolePoliciesPaginator(c.IAM, &iam.ListRolePoliciesInput{RoleName: aws.String(role)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if awsops.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("deleting %s (%s): listing its policies: %w", what, role, err)
		}
		for _, name := range page.PolicyNames {
			_, err := c.IAM.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(name)})
			if err := awsops.IgnoreNotFound(err); err != nil {
				return fmt.Errorf("deleting %s (%s) policy %s: %w", what, role, name, err)
			}
		}
	}
	_, err := c.IAM.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(role)})
	if err := awsops.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("deleting %s (%s): %w", what, role, err)
	}
	return nil
}

// roleDef is a role of the pipeline as a component.
type roleDef struct {
	name       string // the component
	reconciler bool
	role       func(Names) string
	policyName string
	service    string // the principal that assumes it
	// sourceAccount restricts the trust policy to the pipeline's account.
	sourceAccount bool
	policy        func(*pass) PolicyDocument
	fields        func(*State) (name, arn *string)
	// givesIAM is true for the role whose path and boundary Lookup reports
	// as the Spec's IAM settings.
	givesIAM bool
}

func (r roleDef) component() componentDef {
	what := described(r.name)
	return componentDef{
		Name: r.name, Wanted: reconcilerOnly(r.reconciler), Required: r.reconciler,
		Recorded: func(st State) bool { name, _ := r.fields(&st); return *name != "" },
		Ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
			name, arn := r.fields(p.st)
			spec := roleSpec{
				what: what, name: r.role(p.names()), service: r.service, policyName: r.policyName,
				policy: r.policy(p), tags: p.s.tags(), iam: p.s.IAM,
			}
			if r.sourceAccount {
				spec.sourceAccount = p.st.AccountID
			}
			got, err := c.ensureRole(ctx, spec, *name != "")
			if got != "" {
				*name, *arn = spec.name, got
			}
			return err
		},
		Read: func(c *Provisioner, ctx context.Context, p *pass) error {
			name, arn := r.fields(p.st)
			want := r.policy(p).JSON()
			return readRecorded(p, r.name, "role", *name,
				func() (roleAndPolicy, error) { return c.rolePolicy(ctx, *name, r.policyName) },
				func() { *name, *arn = "", "" },
				func(have roleAndPolicy) []string {
					return append(roleControlsDiff(p.s.IAM, have.role), changedIf(!awsops.SamePolicy(have.doc, want), "policy")...)
				})
		},
		Remove: func(c *Provisioner, ctx context.Context, st *State) error {
			name, arn := r.fields(st)
			if err := c.deleteRole(ctx, what, *name); err != nil {
				return err
			}
			*name, *arn = "", ""
			return nil
		},
		Lookup: func(c *Provisioner, ctx context.Context, p *pass) error {
			role := r.role(p.names())
			// A role that cannot be read is left out of the import.
			if out, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)}); err == nil {
				name, arn := r.fields(p.st)
				*name, *arn = role, aws.ToString(out.Role.Arn)
				if r.givesIAM {
					p.s.IAM = IAMSpec{Path: aws.ToString(out.Role.Path), PermissionsBoundary: roleBoundary(out.Role)}
				}
			}
			return nil
		},
	}
}

func (n Names) relayRole() string { return n.RelayRole }

func (n Names) reconcilerRole() string { return n.ReconcilerRole }

func (n Names) schedulerRole() string { return n.SchedulerRole }

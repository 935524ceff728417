package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// logGroup returns the retention of the log group, or a NotFoundError when
// it does not exist.
func (c *Provisioner) logGroup(ctx context.Context, name string) (retention int32, err error) {
	out, err := c.Logs.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String(name)})
	if err != nil {
		return 0, err
	}
	for _, g := range out.LogGroups {
		if aws.ToString(g.LogGroupName) == name {
			return aws.ToInt32(g.RetentionInDays), nil
		}
	}
	return 0, &awsops.NotFoundError{Kind: "log group", ID: name}
}

// ensureLogGroup creates the log group or brings its retention and tags to
// the desired ones. owned reports whether the group now exists and belongs
// to the pipeline, even when a later step failed.
func (c *Provisioner) ensureLogGroup(ctx context.Context, what, name string, retention int32, tags map[string]string, a Account, known bool) (owned bool, err error) {
	have, err := c.logGroup(ctx, name)
	exists := !errors.Is(err, awsops.ErrNotFound)
	if err != nil && exists {
		return known, fmt.Errorf("reading %s (%s): %w", what, name, err)
	}
	switch {
	case !exists:
		if _, err := c.Logs.CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(name), Tags: tags}); err != nil {
			return false, fmt.Errorf("creating %s (%s): %w", what, name, err)
		}
	case !known:
		return false, fmt.Errorf("creating %s (%s): a log group of that name already exists: delete it or choose another pipeline name", what, name)
	default:
		if err := c.syncLogTags(ctx, a.arn("logs", "log-group:"+name), tags); err != nil {
			return true, fmt.Errorf("tagging %s (%s): %w", what, name, err)
		}
	}
	if have != retention || !exists {
		if _, err := c.Logs.PutRetentionPolicy(ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: aws.String(name), RetentionInDays: aws.Int32(retention)}); err != nil {
			return true, fmt.Errorf("setting the retention of %s (%s): %w", what, name, err)
		}
	}
	return true, nil
}

func (c *Provisioner) syncLogTags(ctx context.Context, arn string, want map[string]string) error {
	out, err := c.Logs.ListTagsForResource(ctx, &cloudwatchlogs.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return err
	}
	return awsops.SyncTags(ctx, out.Tags, want, func(ctx context.Context, keys []string) error {
		_, err := c.Logs.UntagResource(ctx, &cloudwatchlogs.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := c.Logs.TagResource(ctx, &cloudwatchlogs.TagResourceInput{ResourceArn: aws.String(arn), Tags: set})
		return err
	})
}

func (c *Provisioner) deleteLogGroup(ctx context.Context, what, name string) error {
	return awsops.Delete(ctx, what, name, func(ctx context.Context, name string) error {
		_, err := c.Logs.DeleteLogGroup(ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: aws.String(name)})
		return err
	})
}

// logGroupDef is a function's log group as a component.
type logGroupDef struct {
	name       string // the component
	reconciler bool
	logGroup   func(Names) string
	field      func(*State) *string
	// function is the settings of the function that logs to it.
	function func(*Spec) *FunctionSpec
}

func (g logGroupDef) component() componentDef {
	what := described(g.name)
	return componentDef{
		Name: g.name, Wanted: reconcilerOnly(g.reconciler), Required: g.reconciler,
		Recorded: func(st State) bool { return *g.field(&st) != "" },
		Ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
			name, field := g.logGroup(p.names()), g.field(p.st)
			owned, err := c.ensureLogGroup(ctx, what, name, g.function(&p.s).LogRetentionDays, p.s.tags(), p.st.account(), *field != "")
			if owned {
				*field = name
			}
			return err
		},
		Read: func(c *Provisioner, ctx context.Context, p *pass) error {
			field, want := g.field(p.st), g.function(&p.s).LogRetentionDays
			return readRecorded(p, g.name, "log group", *field,
				func() (int32, error) { return c.logGroup(ctx, *field) },
				func() { *field = "" },
				func(have int32) []string { return changedIf(have != want, "retention_in_days") })
		},
		Remove: func(c *Provisioner, ctx context.Context, st *State) error {
			if err := c.deleteLogGroup(ctx, what, *g.field(st)); err != nil {
				return err
			}
			*g.field(st) = ""
			return nil
		},
		Lookup: func(c *Provisioner, ctx context.Context, p *pass) error {
			name := g.logGroup(p.names())
			// A log group that cannot be read is left as Lookup found it.
			switch retention, err := c.logGroup(ctx, name); {
			case err == nil:
				*g.field(p.st), g.function(&p.s).LogRetentionDays = name, retention
			case errors.Is(err, awsops.ErrNotFound):
				*g.field(p.st) = ""
			}
			return nil
		},
	}
}

func relayLogGroupField(st *State) *string { return &st.RelayLogGroup }

func (n Names) relayLogGroup() string { return n.RelayLogGroup }

func (n Names) reconcilerLogGroup() string { return n.ReconcilerLogGroup }

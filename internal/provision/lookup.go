package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// Lookup finds the pipeline called name, for import: it returns the Spec
// that describes it, as far as AWS tells, and its State. The relay
// function's environment gives the table and target; the other components
// are found by their names. It returns ErrNotFound when the relay function
// does not exist.
func (c *Provisioner) Lookup(ctx context.Context, name string) (Spec, State, error) {
	p, err := c.lookupFunctions(ctx, name)
	if err != nil {
		return Spec{}, State{}, fmt.Errorf("importing outbox pipeline (%s): %w", name, err)
	}
	if err := component.Lookup(ctx, components, c, p); err != nil {
		return p.s, *p.st, fmt.Errorf("importing outbox pipeline (%s): %w", name, err)
	}
	return p.s, *p.st, nil
}

// lookupFunctions finds the functions: the relay's environment gives the
// Spec's table and target, and a missing reconciler function means that the
// reconciler is disabled.
func (c *Provisioner) lookupFunctions(ctx context.Context, name string) (*pass, error) {
	n := NamesFor(name)
	fn, err := c.getFunction(ctx, n.RelayFunction)
	if errors.Is(err, awsops.ErrNotFound) {
		return nil, fmt.Errorf("relay function %s does not exist: %w", n.RelayFunction, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading relay function (%s): %w", n.RelayFunction, err)
	}
	var env map[string]string
	if fn.Configuration.Environment != nil {
		env = fn.Configuration.Environment.Variables
	}
	rc, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("the relay function's environment: %w", err)
	}
	// A missing reconciler function is recorded as nil.
	rfn, err := c.getFunction(ctx, n.ReconcilerFunction)
	if err = awsops.IgnoreNotFound(err); err != nil {
		return nil, fmt.Errorf("reading reconciler function (%s): %w", n.ReconcilerFunction, err)
	}
	s := specFromEnv(name, rc, env)
	s.Controls, s.Tags = lookupControls(fn), functionTags(fn)
	if cfg := fn.Configuration; len(cfg.Architectures) == 1 {
		s.Architecture = Architecture(cfg.Architectures[0])
	}
	s.Reconciler.Disabled = rfn == nil
	return &pass{
		s: s,
		st: &State{
			Layout: layoutFromEnv(env, rc.Table.SortKeyPrefix, rc.Table.PendingShards),
			Name:   name, TableName: rc.Table.Name,
			RelayPackageSHA256: aws.ToString(fn.Configuration.CodeSha256),
			RelayLogGroup:      n.RelayLogGroup, // kept unless it is known not to exist
		},
		functions: map[string]*lambda.GetFunctionOutput{ComponentRelayFunction: fn, ComponentReconcilerFunction: rfn},
		rc:        rc,
	}, nil
}

// specFromEnv is the Spec that the relay's environment describes.
func specFromEnv(name string, rc config.Config, env map[string]string) Spec {
	return Spec{
		Name: name,
		Table: TableSpec{
			Name: rc.Table.Name, PartitionKey: rc.Table.PartitionKey, SortKey: rc.Table.SortKey,
			SortKeyPrefix: rc.Table.SortKeyPrefix, TTLAttribute: rc.Table.TTLAttribute,
			PendingIndexName: rc.Table.PendingIndexName, PendingShards: rc.Table.PendingShards,
			PendingIndexDisabled: env[config.EnvPendingIndexEnabled] == "false",
		},
		Target:          rc.Target,
		PublishedAction: rc.PublishedAction,
		PublishedTTL:    ptr(rc.PublishedTTL),
		Ordered:         rc.Ordered,
		Reconciler:      ReconcilerSpec{MinAge: rc.ReconcileMinAge},
		ClaimCheck:      ClaimCheckSpec{Enabled: rc.ClaimBucket != "", BucketName: rc.ClaimBucket},
		MultiRegion:     multiRegionFromEnv(rc, env),
	}
}

// multiRegionFromEnv is the MultiRegionSpec of the relay's environment: the
// takeover's times only where the variables set them, 0 for the defaults.
func multiRegionFromEnv(rc config.Config, env map[string]string) MultiRegionSpec {
	m := MultiRegionSpec{Regions: rc.Regions}
	if env[config.EnvTakeoverAfter] != "" {
		m.TakeoverAfter = rc.TakeoverAfter
	}
	if env[config.EnvTakeoverSettle] != "" {
		m.TakeoverSettle = rc.TakeoverSettle
	}
	return m
}

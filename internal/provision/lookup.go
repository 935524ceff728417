package provision

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// Lookup finds the pipeline called name, for import: it returns the Spec
// that describes it, as far as AWS tells, and its State. The relay
// function's environment gives the table and target; the other components
// are found by their names. It returns ErrNotFound when the relay function
// does not exist.
func (c *Pipeline) Lookup(ctx context.Context, name string) (Spec, State, error) {
	p, err := c.lookupFunctions(ctx, name)
	if err != nil {
		return Spec{}, State{}, fmt.Errorf("importing outbox pipeline (%s): %w", name, err)
	}
	if err := c.lookupComponents(ctx, p); err != nil {
		return p.s, *p.st, fmt.Errorf("importing outbox pipeline (%s): %w", name, err)
	}
	return p.s, *p.st, nil
}

// lookupFunctions finds the functions: the relay's environment gives the
// Spec's table and target, and a missing reconciler function means that the
// reconciler is disabled.
func (c *Pipeline) lookupFunctions(ctx context.Context, name string) (*pass, error) {
	n := NamesFor(name)
	fn, err := c.getFunction(ctx, n.RelayFunction)
	if err != nil {
		return nil, fmt.Errorf("reading relay function (%s): %w", n.RelayFunction, err)
	}
	if fn == nil {
		return nil, fmt.Errorf("relay function %s does not exist: %w", n.RelayFunction, ErrNotFound)
	}
	var env map[string]string
	if fn.Configuration.Environment != nil {
		env = fn.Configuration.Environment.Variables
	}
	rc, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("the relay function's environment: %w", err)
	}
	rfn, err := c.getFunction(ctx, n.ReconcilerFunction)
	if err != nil {
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
	}
}

func (c *Pipeline) lookupTable(ctx context.Context, p *pass) error {
	s, st, t := &p.s, p.st, p.rc.Table
	desc, err := c.describeTable(ctx, t.Name)
	if err != nil {
		return fmt.Errorf("reading table (%s): %w", t.Name, err)
	}
	if desc != nil {
		if err := c.recordTable(st, desc); err != nil {
			return err
		}
		tags, _ := c.tableTags(ctx, st.TableARN)
		st.TableOwned = t.Name == p.names().Table && tags[TagPipeline] == s.Name
		st.TTLAttribute = t.TTLAttribute
		st.PendingIndexARN = IndexARN(st.TableARN, t.PendingIndexName)
		s.Table.DeletionProtection = ptr(aws.ToBool(desc.DeletionProtectionEnabled))
		s.Table.KMSKeyARN = tableKMSKey(desc)
		if pitr, err := c.pointInTimeRecovery(ctx, t.Name); err == nil {
			s.Table.PointInTimeRecovery = ptr(pitr)
		}
	}
	s.Table.Existing = !st.TableOwned
	if !st.TableOwned {
		st.Added = parseAdded(p.functions[ComponentRelayFunction].Tags[TagAdded])
	}
	return nil
}

func (c *Pipeline) lookupQueue(ctx context.Context, p *pass) error {
	// A queue that cannot be read is left out of the import.
	q, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(p.names().DeadLetterQueue)})
	if err != nil {
		return nil //nolint:nilerr // see above
	}
	p.st.QueueURL = aws.ToString(q.QueueUrl)
	if attrs, err := c.queue(ctx, p.st.QueueURL); err == nil && attrs != nil {
		p.st.QueueARN = attrs[string(sqstypes.QueueAttributeNameQueueArn)]
		if v, err := strconv.Atoi(attrs[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)]); err == nil {
			p.s.DeadLetterQueue.MessageRetentionSeconds = int32(v)
		}
		p.s.DeadLetterQueue.KMSMasterKeyID = attrs[string(sqstypes.QueueAttributeNameKmsMasterKeyId)]
	}
	return nil
}

// lookupMapping finds the relay function's mapping: the one on the
// table's stream, else one left on an earlier stream (the stream was
// disabled and enabled again), which Update moves to the stream. Its
// settings are those of the mapping found, never zeros.
func (c *Pipeline) lookupMapping(ctx context.Context, p *pass) error {
	var found *lambdatypes.EventSourceMappingConfiguration
	pages := lambda.NewListEventSourceMappingsPaginator(c.Lambda, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(p.names().RelayFunction)})
	for pages.HasMorePages() && (found == nil || aws.ToString(found.EventSourceArn) != p.st.StreamARN) {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing event source mappings: %w", err)
		}
		for _, m := range page.EventSourceMappings {
			if aws.ToString(m.State) == mappingDeleting {
				continue
			}
			if found == nil || aws.ToString(m.EventSourceArn) == p.st.StreamARN {
				found = &m
			}
		}
	}
	if found == nil {
		return nil
	}
	p.st.MappingUUID = aws.ToString(found.UUID)
	p.s.Mapping = MappingSpec{
		BatchSize: aws.ToInt32(found.BatchSize), MaximumBatchingWindowSeconds: aws.ToInt32(found.MaximumBatchingWindowInSeconds),
		ParallelizationFactor: aws.ToInt32(found.ParallelizationFactor), MaximumRetryAttempts: found.MaximumRetryAttempts,
		MaximumRecordAgeSeconds: found.MaximumRecordAgeInSeconds, BisectBatchOnFunctionError: found.BisectBatchOnFunctionError,
	}
	return nil
}

func (c *Pipeline) lookupSchedule(ctx context.Context, p *pass) error {
	n, r := p.names(), &p.s.Reconciler
	// A schedule that cannot be read is left out of the import.
	sch, err := c.findSchedule(ctx, n.Schedule)
	if err != nil || sch == nil {
		return nil //nolint:nilerr // see above
	}
	p.st.ScheduleName, p.st.ScheduleARN = n.Schedule, aws.ToString(sch.Arn)
	if g := aws.ToString(sch.GroupName); g != ScheduleGroup {
		p.st.ScheduleGroup, r.ScheduleGroup = g, g
	}
	r.ScheduleTimezone = aws.ToString(sch.ScheduleExpressionTimezone)
	if w := sch.FlexibleTimeWindow; w != nil {
		r.FlexibleTimeWindowMinutes = aws.ToInt32(w.MaximumWindowInMinutes)
	}
	r.ScheduleExpression = aws.ToString(sch.ScheduleExpression)
	return nil
}

// tableTags returns the tags of the table arn, every page of them.
func (c *Pipeline) tableTags(ctx context.Context, arn string) (map[string]string, error) {
	tags := map[string]string{}
	var token *string
	for {
		out, err := c.DynamoDB.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn), NextToken: token})
		if err != nil {
			return nil, err
		}
		maps.Copy(tags, awsops.TagMap(out.Tags, func(t types.Tag) (*string, *string) { return t.Key, t.Value }))
		if token = out.NextToken; token == nil {
			return tags, nil
		}
	}
}

// layoutFromEnv reads the Layout from the relay's environment.
func layoutFromEnv(env map[string]string, prefix string, shards int) Layout {
	l := Layout{SortKeyPrefix: prefix, PendingShards: shards}
	if v := env[config.EnvFormerSortKeyPrefixes]; v != "" {
		l.FormerSortKeyPrefixes = strings.Split(v, ",")
	}
	if n, err := strconv.Atoi(env[config.EnvReconcileShards]); err == nil && n > shards {
		l.ReconcileShards = n
	}
	return l
}

// findSchedule finds the pipeline's schedule in any group.
func (c *Pipeline) findSchedule(ctx context.Context, name string) (*scheduler.GetScheduleOutput, error) {
	p := scheduler.NewListSchedulesPaginator(c.Scheduler, &scheduler.ListSchedulesInput{NamePrefix: aws.String(name)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, sch := range page.Schedules {
			if aws.ToString(sch.Name) == name {
				return c.getSchedule(ctx, name, aws.ToString(sch.GroupName))
			}
		}
	}
	return nil, nil
}

package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// Lookup finds the pipeline called name, for import: it returns the Spec
// that describes it, as far as AWS tells, and its State. The relay
// function's environment gives the table and target; the other components
// are found by their names. It returns ErrNotFound when the relay function
// does not exist.
func (c *Clients) Lookup(ctx context.Context, name string) (Spec, State, error) {
	n := NamesFor(name)
	fn, err := c.getFunction(ctx, n.RelayFunction)
	if err != nil {
		return Spec{}, State{}, fmt.Errorf("importing outbox pipeline (%s): reading relay function (%s): %w", name, n.RelayFunction, err)
	}
	if fn == nil {
		return Spec{}, State{}, fmt.Errorf("importing outbox pipeline (%s): relay function %s does not exist: %w", name, n.RelayFunction, ErrNotFound)
	}
	cfg := fn.Configuration
	var env map[string]string
	if cfg.Environment != nil {
		env = cfg.Environment.Variables
	}
	rc, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return Spec{}, State{}, fmt.Errorf("importing outbox pipeline (%s): the relay function's environment: %w", name, err)
	}
	s := Spec{
		Name: name,
		Table: TableSpec{
			Name: rc.Table.Name, PartitionKey: rc.Table.PartitionKey, SortKey: rc.Table.SortKey,
			SortKeyPrefix: rc.Table.SortKeyPrefix, TTLAttribute: rc.Table.TTLAttribute,
			PendingIndexName: rc.Table.PendingIndexName, PendingShards: rc.Table.PendingShards,
			PendingIndexDisabled: env[config.EnvPendingIndexEnabled] == "false",
		},
		Target:          TargetSpec{Type: rc.Target, EventBus: rc.EventBus, TopicARN: rc.TopicARN},
		PublishedAction: rc.PublishedAction,
		PublishedTTL:    ptr(rc.PublishedTTL),
		Relay: FunctionSpec{
			MemorySize: aws.ToInt32(cfg.MemorySize), Timeout: aws.ToInt32(cfg.Timeout),
		},
		Reconciler: ReconcilerSpec{MinAge: rc.ReconcileMinAge},
		Controls:   lookupControls(fn),
		Tags:       functionTags(fn),
	}
	if len(cfg.Architectures) == 1 {
		s.Architecture = Architecture(cfg.Architectures[0])
	}
	if fn.Concurrency != nil {
		s.Relay.ReservedConcurrency = fn.Concurrency.ReservedConcurrentExecutions
	}
	st := State{
		Layout: layoutFromEnv(env, rc.Table.SortKeyPrefix, rc.Table.PendingShards),
		Name:   name, TableName: rc.Table.Name,
		RelayFunctionName: n.RelayFunction, RelayFunctionARN: aws.ToString(cfg.FunctionArn),
		RelayPackageSHA256: aws.ToString(cfg.CodeSha256),
		RelayLogGroup:      n.RelayLogGroup,
	}
	desc, err := c.describeTable(ctx, rc.Table.Name)
	if err != nil {
		return s, st, fmt.Errorf("importing outbox pipeline (%s): reading table (%s): %w", name, rc.Table.Name, err)
	}
	if desc != nil {
		if err := c.recordTable(&st, desc); err != nil {
			return s, st, err
		}
		tags, _ := c.tableTags(ctx, st.TableARN)
		st.TableOwned = rc.Table.Name == n.Table && tags[TagPipeline] == name
		st.TTLAttribute = rc.Table.TTLAttribute
		st.PendingIndexARN = IndexARN(st.TableARN, rc.Table.PendingIndexName)
		s.Table.DeletionProtection = ptr(aws.ToBool(desc.DeletionProtectionEnabled))
		s.Table.KMSKeyARN = tableKMSKey(desc)
		if pitr, err := c.pointInTimeRecovery(ctx, rc.Table.Name); err == nil {
			s.Table.PointInTimeRecovery = ptr(pitr)
		}
	}
	s.Table.Existing = !st.TableOwned
	if !st.TableOwned {
		st.Added = parseAdded(fn.Tags[TagAdded])
	}
	if retention, ok, err := c.logGroup(ctx, n.RelayLogGroup); err == nil && ok {
		s.Relay.LogRetentionDays = retention
	} else if err == nil {
		st.RelayLogGroup = ""
	}
	if role, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(n.RelayRole)}); err == nil {
		st.RelayRoleName, st.RelayRoleARN = n.RelayRole, aws.ToString(role.Role.Arn)
		s.IAM = IAMSpec{Path: aws.ToString(role.Role.Path), PermissionsBoundary: roleBoundary(role.Role)}
	}
	if q, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(n.DeadLetterQueue)}); err == nil {
		st.QueueURL = aws.ToString(q.QueueUrl)
		if attrs, err := c.queue(ctx, st.QueueURL); err == nil && attrs != nil {
			st.QueueARN = attrs[string(sqstypes.QueueAttributeNameQueueArn)]
			if v, err := strconv.Atoi(attrs[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)]); err == nil {
				s.DeadLetterQueue.MessageRetentionSeconds = int32(v)
			}
			s.DeadLetterQueue.KMSMasterKeyID = attrs[string(sqstypes.QueueAttributeNameKmsMasterKeyId)]
		}
	}
	mappings, err := c.Lambda.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(n.RelayFunction)})
	if err != nil {
		return s, st, fmt.Errorf("importing outbox pipeline (%s): listing event source mappings: %w", name, err)
	}
	for _, m := range mappings.EventSourceMappings {
		if st.StreamARN != "" && aws.ToString(m.EventSourceArn) != st.StreamARN {
			continue
		}
		st.MappingUUID = aws.ToString(m.UUID)
		s.Mapping = MappingSpec{
			BatchSize: aws.ToInt32(m.BatchSize), MaximumBatchingWindowSeconds: aws.ToInt32(m.MaximumBatchingWindowInSeconds),
			ParallelizationFactor: aws.ToInt32(m.ParallelizationFactor), MaximumRetryAttempts: m.MaximumRetryAttempts,
			MaximumRecordAgeSeconds: m.MaximumRecordAgeInSeconds, BisectBatchOnFunctionError: m.BisectBatchOnFunctionError,
		}
		break
	}

	rfn, err := c.getFunction(ctx, n.ReconcilerFunction)
	if err != nil {
		return s, st, fmt.Errorf("importing outbox pipeline (%s): reading reconciler function (%s): %w", name, n.ReconcilerFunction, err)
	}
	if rfn == nil {
		s.Reconciler.Disabled = true
	} else {
		st.ReconcilerFunctionName, st.ReconcilerFunctionARN = n.ReconcilerFunction, aws.ToString(rfn.Configuration.FunctionArn)
		s.Reconciler.Function = FunctionSpec{MemorySize: aws.ToInt32(rfn.Configuration.MemorySize), Timeout: aws.ToInt32(rfn.Configuration.Timeout)}
		if rfn.Concurrency != nil {
			s.Reconciler.Function.ReservedConcurrency = rfn.Concurrency.ReservedConcurrentExecutions
		}
		if retention, ok, err := c.logGroup(ctx, n.ReconcilerLogGroup); err == nil && ok {
			st.ReconcilerLogGroup, s.Reconciler.Function.LogRetentionDays = n.ReconcilerLogGroup, retention
		}
		if role, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(n.ReconcilerRole)}); err == nil {
			st.ReconcilerRoleName, st.ReconcilerRoleARN = n.ReconcilerRole, aws.ToString(role.Role.Arn)
		}
		if role, err := c.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(n.SchedulerRole)}); err == nil {
			st.SchedulerRoleName, st.SchedulerRoleARN = n.SchedulerRole, aws.ToString(role.Role.Arn)
		}
		if sch, err := c.findSchedule(ctx, n.Schedule); err == nil && sch != nil {
			st.ScheduleName, st.ScheduleARN = n.Schedule, aws.ToString(sch.Arn)
			if g := aws.ToString(sch.GroupName); g != ScheduleGroup {
				st.ScheduleGroup, s.Reconciler.ScheduleGroup = g, g
			}
			s.Reconciler.ScheduleTimezone = aws.ToString(sch.ScheduleExpressionTimezone)
			if w := sch.FlexibleTimeWindow; w != nil {
				s.Reconciler.FlexibleTimeWindowMinutes = aws.ToInt32(w.MaximumWindowInMinutes)
			}
			s.Reconciler.ScheduleExpression = aws.ToString(sch.ScheduleExpression)
		}
	}
	if err := c.lookupAlarms(ctx, &s, &st); err != nil {
		return s, st, fmt.Errorf("importing outbox pipeline (%s): %w", name, err)
	}
	st.TargetARN = s.WithDefaults().TargetARN(st.account())
	return s, st, nil
}

func (c *Clients) tableTags(ctx context.Context, arn string) (map[string]string, error) {
	out, err := c.DynamoDB.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		return nil, err
	}
	tags := map[string]string{}
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
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
func (c *Clients) findSchedule(ctx context.Context, name string) (*scheduler.GetScheduleOutput, error) {
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

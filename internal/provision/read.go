package provision

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// Components of a pipeline, as named in a Drift.
const (
	ComponentTable              = "table"
	ComponentStream             = "stream"
	ComponentPendingIndex       = "pending_index"
	ComponentTTL                = "ttl"
	ComponentDeadLetterQueue    = "dead_letter_queue"
	ComponentRelayLogGroup      = "relay_log_group"
	ComponentRelayRole          = "relay_role"
	ComponentRelayFunction      = "relay_function"
	ComponentMapping            = "event_source_mapping"
	ComponentReconcilerLogGroup = "reconciler_log_group"
	ComponentReconcilerRole     = "reconciler_role"
	ComponentReconcilerFunction = "reconciler_function"
	ComponentSchedulerRole      = "scheduler_role"
	ComponentSchedule           = "schedule"
)

// Change and Drift report what Read found different from the Spec (see
// awsops.Drift); Update repairs all of it in place.
type (
	Change = awsops.Change
	Drift  = awsops.Drift
)

// Read observes every component recorded in st and compares it with s. It
// returns the observed State, in which missing components are cleared (so
// that Update recreates them), and the Drift. RelayPackageSHA256 is the code
// that the relay function actually runs. When nothing recorded exists any
// more, Read returns ErrNotFound.
func (c *Pipeline) Read(ctx context.Context, s Spec, st State) (State, Drift, error) {
	var d Drift
	if !st.Exists() {
		return st, d, ErrNotFound
	}
	s = s.WithDefaults()
	if err := c.readComponents(ctx, &pass{s: s, st: &st, d: &d}); err != nil {
		return st, d, err
	}
	if s.Reconciler.Disabled && (st.ReconcilerFunctionName != "" || st.ScheduleName != "") {
		d.AddChanged(ComponentReconcilerFunction, "disabled")
	}
	if !st.Exists() {
		return st, d, ErrNotFound
	}
	return st, d, nil
}

// readRecorded reads the component recorded as id, if any, with get, which
// reports whether it exists: a missing one is recorded in the drift and
// cleared from the State (forget), so that Update recreates it; the fields
// of one that exists are compared by diff.
func readRecorded[T any](p *pass, component, what, id string, get func() (T, bool, error), forget func(), diff func(T) []string) error {
	if id == "" {
		return nil
	}
	have, ok, err := get()
	if err != nil {
		return fmt.Errorf("reading %s (%s): %w", what, id, err)
	}
	if !ok {
		p.d.AddMissing(component)
		forget()
		return nil
	}
	p.d.AddChanged(component, diff(have)...)
	return nil
}

func (c *Pipeline) readQueue(ctx context.Context, p *pass) error {
	st := p.st
	return readRecorded(p, ComponentDeadLetterQueue, "dead-letter queue", st.QueueURL,
		func() (map[string]string, bool, error) {
			attrs, err := c.queue(ctx, st.QueueURL)
			return attrs, attrs != nil, err
		},
		func() { st.QueueURL, st.QueueARN = "", "" },
		func(attrs map[string]string) []string {
			var fields []string
			for k, v := range queueAttributes(p.s.DeadLetterQueue) {
				if attrs[k] != v && (k != string(sqstypes.QueueAttributeNameSqsManagedSseEnabled) || v != "false" || attrs[k] != "") {
					fields = append(fields, k)
				}
			}
			return sortedStrings(fields)
		})
}

func (c *Pipeline) readMapping(ctx context.Context, p *pass) error {
	st := p.st
	return readRecorded(p, ComponentMapping, "event source mapping", st.MappingUUID,
		func() (*lambda.GetEventSourceMappingOutput, bool, error) {
			have, err := c.getMapping(ctx, st.MappingUUID)
			return have, have != nil, err
		},
		func() { st.MappingUUID = "" },
		func(have *lambda.GetEventSourceMappingOutput) []string { return mappingDiff(p.s, *st, have) })
}

func (c *Pipeline) readSchedule(ctx context.Context, p *pass) error {
	st := p.st
	return readRecorded(p, ComponentSchedule, "reconcile schedule", st.ScheduleName,
		func() (*scheduler.GetScheduleOutput, bool, error) {
			have, err := c.getSchedule(ctx, st.ScheduleName, st.group())
			return have, have != nil, err
		},
		func() { st.ScheduleName, st.ScheduleARN = "", "" },
		func(have *scheduler.GetScheduleOutput) []string { return scheduleDiff(p.s, *st, have) })
}

func sortedStrings(s []string) []string {
	m := map[string]string{}
	for _, e := range s {
		m[e] = ""
	}
	return awsops.SortedKeys(m)
}

func (c *Pipeline) readTable(ctx context.Context, s Spec, st *State, d *Drift) error {
	if st.TableName == "" {
		return nil
	}
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil {
		return fmt.Errorf("reading table (%s): %w", st.TableName, err)
	}
	if desc == nil {
		d.AddMissing(ComponentTable)
		if st.TableOwned {
			st.clearTable()
		}
		return nil
	}
	if err := c.recordTable(st, desc); err != nil {
		return fmt.Errorf("reading table (%s): %w", st.TableName, err)
	}
	if err := c.readTableProtection(ctx, s, *st, desc, d); err != nil {
		return err
	}
	if st.StreamARN == "" {
		d.AddMissing(ComponentStream)
	} else if !HasNewImage(st.StreamViewType) {
		d.AddChanged(ComponentStream, "stream_view_type")
	}
	t := s.OutboxTable()
	index, _ := t.PendingIndex()
	found := false
	for _, g := range desc.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == t.PendingIndexName {
			found = true
			if !sameKeySchema(g.KeySchema, index.KeySchema) {
				d.AddChanged(ComponentPendingIndex, "key_schema")
			}
		}
	}
	switch {
	case s.Table.PendingIndexDisabled && found:
		d.AddChanged(ComponentPendingIndex, "enabled")
	case !s.Table.PendingIndexDisabled && !found:
		d.AddMissing(ComponentPendingIndex)
	}
	attr, err := c.ttlStatus(ctx, st.TableName)
	if err != nil {
		return fmt.Errorf("reading table (%s) TTL: %w", st.TableName, err)
	}
	switch {
	case attr == "":
		d.AddMissing(ComponentTTL)
	case st.TTLAttribute != "" && attr != st.TTLAttribute:
		d.AddChanged(ComponentTTL, "attribute_name")
	}
	return nil
}

func (c *Pipeline) readLogGroup(ctx context.Context, component string, name *string, retention int32, d *Drift) error {
	if *name == "" {
		return nil
	}
	have, exists, err := c.logGroup(ctx, *name)
	if err != nil {
		return fmt.Errorf("reading log group (%s): %w", *name, err)
	}
	switch {
	case !exists:
		d.AddMissing(component)
		*name = ""
	case have != retention:
		d.AddChanged(component, "retention_in_days")
	}
	return nil
}

func (c *Pipeline) readRole(ctx context.Context, component string, name, arn *string, policyName string, want PolicyDocument, i IAMSpec, d *Drift) error {
	if *name == "" {
		return nil
	}
	doc, role, err := c.rolePolicy(ctx, *name, policyName)
	if err != nil {
		return fmt.Errorf("reading role (%s): %w", *name, err)
	}
	if role == nil {
		d.AddMissing(component)
		*name, *arn = "", ""
		return nil
	}
	fields := roleControlsDiff(i, role)
	if !awsops.SamePolicy(doc, want.JSON()) {
		fields = append(fields, "policy")
	}
	d.AddChanged(component, fields...)
	return nil
}

// readFunction records drift of a function and returns its code's SHA-256.
func (c *Pipeline) readFunction(ctx context.Context, component string, name, arn *string, f functionSpec, d *Drift) (string, error) {
	have, err := c.getFunction(ctx, *name)
	if err != nil {
		return "", fmt.Errorf("reading function (%s): %w", *name, err)
	}
	if have == nil {
		d.AddMissing(component)
		*name, *arn = "", ""
		return "", nil
	}
	*arn = aws.ToString(have.Configuration.FunctionArn)
	sha := aws.ToString(have.Configuration.CodeSha256)
	f.sha = sha // code changes are reported through RelayPackageSHA256
	cfg, code := functionDiff(f, have)
	fields := append(cfg, code...)
	var current *int32
	if have.Concurrency != nil {
		current = have.Concurrency.ReservedConcurrentExecutions
	}
	if want := f.config.ReservedConcurrency; (want == nil) != (current == nil) || (want != nil && *want != *current) {
		fields = append(fields, "reserved_concurrency")
	}
	d.AddChanged(component, fields...)
	return sha, nil
}

// functionTags returns the function's tags without those the pipeline
// manages.
func functionTags(out *lambda.GetFunctionOutput) map[string]string {
	tags := maps.Clone(out.Tags)
	for k := range tags {
		if strings.HasPrefix(k, "outbox:") {
			delete(tags, k)
		}
	}
	return tags
}

package provision

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// component is one part of a pipeline. Apply ensures the components in the
// order of the components table, Delete removes them in the reverse order,
// and Read and Lookup go through them in the same order, so that a step
// finds in the State what the steps before it recorded. A nil step does
// nothing.
type component struct {
	// name is the component in a Drift; "" for a step that records settings
	// rather than a resource.
	name string
	// reconciler is true for the components that exist only while the
	// reconciler is enabled: Apply removes them when it is disabled.
	reconciler bool
	// required is true when Read reports the component missing while the
	// State does not record it (a create that stopped before it).
	required bool
	// recorded reports whether the State records the component.
	recorded func(State) bool

	// The steps take the Pipeline first, so that methods such as
	// (*Pipeline).readQueue serve as steps.
	ensure func(*Pipeline, context.Context, *pass) error
	read   func(*Pipeline, context.Context, *pass) error
	remove func(*Pipeline, context.Context, *State) error
	lookup func(*Pipeline, context.Context, *pass) error
}

// pass is what the steps of one Apply, Read or Lookup share.
type pass struct {
	s  Spec
	st *State
	// d is the drift that Read records.
	d *Drift
	// res are the resources of the roles' policies: Apply sets them once
	// the dead-letter queue exists, Read once the table is read.
	res Resources
	// zip and sha are the relay package that Apply deploys.
	zip []byte
	sha string
	// functions are the functions that Lookup found, by component.
	functions map[string]*lambda.GetFunctionOutput
	// rc is the relay function's configuration, for Lookup.
	rc config.Config
}

// wants reports whether the Spec asks for the component.
func (p *pass) wants(k component) bool {
	return !k.reconciler || !p.s.Reconciler.Disabled
}

// names are the names of the pipeline's components.
func (p *pass) names() Names { return NamesFor(p.s.Name) }

// components are the pipeline's components in the order in which they are
// created: each needs those before it (the functions their roles and log
// groups, the mapping the relay function and the queue, the schedule the
// reconciler function), and the alarms, which watch the reconciler, go
// last.
var components = []component{
	tableComponent,
	layoutComponent,
	targetComponent,
	queueComponent,
	logGroupDef{name: ComponentRelayLogGroup, logGroup: Names.relayLogGroup, field: relayLogGroupField, function: relaySpec}.component(),
	roleDef{
		name: ComponentRelayRole, role: Names.relayRole, policyName: RelayPolicyName, service: "lambda.amazonaws.com",
		policy: func(p *pass) PolicyDocument { return RelayPolicy(p.s, p.res) },
		fields: func(st *State) (*string, *string) { return &st.RelayRoleName, &st.RelayRoleARN }, givesIAM: true,
	}.component(),
	functionDef{
		name: ComponentRelayFunction, function: Names.relayFunction, config: relaySpec, recordsCode: true,
		role:   func(st State) string { return st.RelayRoleARN },
		fields: func(st *State) (*string, *string) { return &st.RelayFunctionName, &st.RelayFunctionARN },
		tags:   relayFunctionTags,
	}.component(),
	mappingComponent,
	logGroupDef{
		name: ComponentReconcilerLogGroup, reconciler: true, logGroup: Names.reconcilerLogGroup,
		field: func(st *State) *string { return &st.ReconcilerLogGroup }, function: reconcilerSpec,
	}.component(),
	roleDef{
		name: ComponentReconcilerRole, reconciler: true, role: Names.reconcilerRole, policyName: ReconcilerPolicyName,
		service: "lambda.amazonaws.com", policy: func(p *pass) PolicyDocument { return ReconcilerPolicy(p.s, p.res) },
		fields: func(st *State) (*string, *string) { return &st.ReconcilerRoleName, &st.ReconcilerRoleARN },
	}.component(),
	functionDef{
		name: ComponentReconcilerFunction, reconciler: true, function: Names.reconcilerFunction, config: reconcilerSpec,
		role:   func(st State) string { return st.ReconcilerRoleARN },
		fields: func(st *State) (*string, *string) { return &st.ReconcilerFunctionName, &st.ReconcilerFunctionARN },
		tags:   func(s Spec, _ State) map[string]string { return s.tags() },
	}.component(),
	roleDef{
		name: ComponentSchedulerRole, reconciler: true, role: Names.schedulerRole, policyName: SchedulerPolicyName,
		service: "scheduler.amazonaws.com", sourceAccount: true,
		policy: func(p *pass) PolicyDocument { return SchedulerPolicy(p.st.ReconcilerFunctionARN) },
		fields: func(st *State) (*string, *string) { return &st.SchedulerRoleName, &st.SchedulerRoleARN },
	}.component(),
	scheduleComponent,
	alarmsComponent,
}

// described is how errors name a component: "relay log group".
func described(component string) string { return strings.ReplaceAll(component, "_", " ") }

// ensureComponents creates or updates the components that s asks for, then
// removes, in the reverse order, those it no longer asks for: after the
// alarms that watch them.
func (c *Pipeline) ensureComponents(ctx context.Context, p *pass) error {
	for _, k := range components {
		if k.ensure != nil && p.wants(k) {
			if err := k.ensure(c, ctx, p); err != nil {
				return err
			}
		}
	}
	for _, k := range slices.Backward(components) {
		if k.remove != nil && !p.wants(k) {
			if err := k.remove(c, ctx, p.st); err != nil {
				return err
			}
		}
	}
	return nil
}

// readComponents observes the components, clearing in the State those that
// no longer exist, and records their drift.
func (c *Pipeline) readComponents(ctx context.Context, p *pass) error {
	for _, k := range components {
		if k.read == nil {
			continue
		}
		if err := k.read(c, ctx, p); err != nil {
			return err
		}
		if k.required && p.wants(k) && !k.recorded(*p.st) {
			p.d.AddMissing(k.name)
		}
	}
	return nil
}

// removeComponents removes every component in the reverse order of
// creation, clearing each in st once it is gone.
func (c *Pipeline) removeComponents(ctx context.Context, st *State) error {
	for _, k := range slices.Backward(components) {
		if k.remove != nil {
			if err := k.remove(c, ctx, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// lookupComponents finds the components that the Spec found so far asks
// for.
func (c *Pipeline) lookupComponents(ctx context.Context, p *pass) error {
	for _, k := range components {
		if k.lookup != nil && p.wants(k) {
			if err := k.lookup(c, ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Exists reports whether anything of the pipeline is recorded.
func (s State) Exists() bool {
	return slices.ContainsFunc(components, func(k component) bool { return k.recorded != nil && k.recorded(s) })
}

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

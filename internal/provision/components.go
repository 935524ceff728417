package provision

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/component"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// componentDef is one part of a pipeline (see package component): Apply
// ensures the components in the order of the components table, Delete
// removes them in the reverse order, and Read and Lookup go through them in
// the same order. The components of the reconciler are wanted only while
// it is enabled: Apply removes them when it is disabled.
type componentDef = component.Component[*Provisioner, *pass, State]

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

func (p *pass) State() *State            { return p.st }
func (p *pass) Missing(component string) { p.d.AddMissing(component) }

// reconcilerEnabled is Wanted for the components of the reconciler.
func reconcilerEnabled(p *pass) bool { return !p.s.Reconciler.Disabled }

// reconcilerOnly is reconcilerEnabled for a component of the reconciler,
// nil (always wanted) for another.
func reconcilerOnly(reconciler bool) func(*pass) bool {
	if reconciler {
		return reconcilerEnabled
	}
	return nil
}

// names are the names of the pipeline's components.
func (p *pass) names() Names { return NamesFor(p.s.Name) }

// components are the pipeline's components in the order in which they are
// created: each needs those before it (the functions their roles and log
// groups, the mapping the relay function and the queue, the schedule the
// reconciler function), and the alarms, which watch the reconciler, go
// last.
var components = []componentDef{
	tableComponent,
	claimBucketComponent,
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

// Exists reports whether anything of the pipeline is recorded.
func (s State) Exists() bool { return component.Recorded(components, s) }

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

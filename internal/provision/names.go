package provision

import (
	"fmt"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

// Suffixes of the component names.
const (
	suffixTable      = "-outbox"
	suffixRelay      = "-relay"
	suffixReconciler = "-reconciler"
	suffixQueue      = "-relay-dlq"
	suffixSchedule   = "-reconcile"
	suffixScheduler  = "-scheduler"

	suffixAlarmDLQNotEmpty      = "-dlq-not-empty"
	suffixAlarmRelayErrors      = "-relay-errors"
	suffixAlarmIteratorAge      = "-iterator-age"
	suffixAlarmOldestPendingAge = "-oldest-pending-age"
)

// Names of the inline policies, one per role.
const (
	RelayPolicyName      = "outbox-relay"
	ReconcilerPolicyName = "outbox-reconciler"
	SchedulerPolicyName  = "outbox-scheduler"
)

// TagPipeline is set on every tagged component to the pipeline's name.
const TagPipeline = "outbox:pipeline"

// ScheduleGroup is the EventBridge Scheduler group of the schedule.
const ScheduleGroup = "default"

// Names are the names of a pipeline's components.
type Names struct {
	// Table is the name of a dedicated table.
	Table                   string
	RelayFunction           string
	RelayRole               string
	RelayLogGroup           string
	DeadLetterQueue         string
	ReconcilerFunction      string
	ReconcilerRole          string
	ReconcilerLogGroup      string
	Schedule                string
	SchedulerRole           string
	RelayPolicyName         string
	ReconcilerPolicyName    string
	SchedulerRolePolicyName string
	// CloudWatch alarms.
	AlarmDLQNotEmpty      string
	AlarmRelayErrors      string
	AlarmIteratorAge      string
	AlarmOldestPendingAge string
}

// Alarm returns the name of the alarm key (AlarmDLQNotEmpty...).
func (n Names) Alarm(key string) string {
	switch key {
	case AlarmDLQNotEmpty:
		return n.AlarmDLQNotEmpty
	case AlarmRelayErrors:
		return n.AlarmRelayErrors
	case AlarmIteratorAge:
		return n.AlarmIteratorAge
	case AlarmOldestPendingAge:
		return n.AlarmOldestPendingAge
	case AlarmEventsFailed, AlarmEnvironmentErrors, AlarmReconcilerEventsFailed, AlarmReconcilerEnvironmentErrors, AlarmStuck,
		AlarmOrderingConflicts, AlarmTakeoverUnavailable:
		// <name>-events-failed, <name>-environment-errors...
		return strings.TrimSuffix(n.RelayFunction, suffixRelay) + "-" + strings.ReplaceAll(key, "_", "-")
	}
	return ""
}

// NamesFor returns the component names of the pipeline called name.
func NamesFor(name string) Names {
	return Names{
		Table:                   name + suffixTable,
		RelayFunction:           name + suffixRelay,
		RelayRole:               name + suffixRelay,
		RelayLogGroup:           "/aws/lambda/" + name + suffixRelay,
		DeadLetterQueue:         name + suffixQueue,
		ReconcilerFunction:      name + suffixReconciler,
		ReconcilerRole:          name + suffixReconciler,
		ReconcilerLogGroup:      "/aws/lambda/" + name + suffixReconciler,
		Schedule:                name + suffixSchedule,
		SchedulerRole:           name + suffixScheduler,
		RelayPolicyName:         RelayPolicyName,
		ReconcilerPolicyName:    ReconcilerPolicyName,
		SchedulerRolePolicyName: SchedulerPolicyName,
		AlarmDLQNotEmpty:        name + suffixAlarmDLQNotEmpty,
		AlarmRelayErrors:        name + suffixAlarmRelayErrors,
		AlarmIteratorAge:        name + suffixAlarmIteratorAge,
		AlarmOldestPendingAge:   name + suffixAlarmOldestPendingAge,
	}
}

// ARN is a parsed Amazon Resource Name.
type ARN struct {
	Partition, Service, Region, Account, Resource string
}

// ParseARN splits an ARN into its parts.
func ParseARN(s string) (ARN, error) {
	p := strings.SplitN(s, ":", 6)
	if len(p) != 6 || p[0] != "arn" || p[1] == "" || p[2] == "" {
		return ARN{}, fmt.Errorf("%q is not an ARN", s)
	}
	return ARN{Partition: p[1], Service: p[2], Region: p[3], Account: p[4], Resource: p[5]}, nil
}

func (a ARN) String() string {
	return strings.Join([]string{"arn", a.Partition, a.Service, a.Region, a.Account, a.Resource}, ":")
}

// Account is where the pipeline lives; every ARN that the pipeline derives
// rather than reads is built from it.
type Account struct {
	Partition, Region, ID string
}

// AccountOf returns the account of a regional ARN (the table's).
func AccountOf(arn string) (Account, error) {
	a, err := ParseARN(arn)
	if err != nil {
		return Account{}, err
	}
	return Account{Partition: a.Partition, Region: a.Region, ID: a.Account}, nil
}

func (a Account) arn(service, resource string) string {
	return ARN{Partition: a.Partition, Service: service, Region: a.Region, Account: a.ID, Resource: resource}.String()
}

// LogGroupARN returns the ARN of a log group's streams, the resource of
// logs:CreateLogStream and logs:PutLogEvents.
func (a Account) LogGroupARN(group string) string {
	return a.arn("logs", "log-group:"+group+":*")
}

// StreamsARN returns the resource that covers every stream of a table,
// present and future: a re-enabled stream gets a new ARN.
func StreamsARN(tableARN string) string { return tableARN + "/stream/*" }

// IndexARN returns the ARN of a table's index.
func IndexARN(tableARN, index string) string { return tableARN + "/index/" + index }

// TargetARN returns the ARN that the pipeline publishes to; "" when it
// needs an account that is not known.
func (s Spec) TargetARN(a Account) string {
	return s.Target.ARN(targetkind.Account(a))
}

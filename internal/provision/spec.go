// Package provision provisions one transactional outbox on AWS: the table (a
// dedicated one, or an existing one that it adopts), the relay function and
// its event source mapping on the table's stream, the dead-letter queue, the
// reconciler function and its schedule, their roles and log groups, and
// optionally CloudWatch alarms on them.
//
// It knows nothing of Terraform. The provider maps its schema to a Spec,
// stores the State that Create and Update return, and plans repairs from the
// drift that Read reports.
//
// Every component is named after Spec.Name (see Names). Create builds the
// components in dependency order and removes what it built if a step fails;
// Delete removes them in reverse order, tolerates components already gone
// and, on an adopted table, reverts only what the pipeline added.
package provision

import (
	"fmt"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

// Architecture is the instruction set of the functions.
type Architecture string

// Architectures of the relay package.
const (
	ArchARM64  Architecture = "arm64"
	ArchX86_64 Architecture = "x86_64"
)

// LambdaMBPerVCPU is the memory at which Lambda gives a function one vCPU;
// it gives CPU in proportion to memory
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
const LambdaMBPerVCPU = 1769

// Defaults of a Spec.
const (
	DefaultArchitecture = ArchARM64
	DefaultRelayMemory  = 256
	DefaultRelayTimeout = 60
	// DefaultReconcilerMemory is one vCPU: a recovery's runs are bound by
	// their CPU (DESIGN.md, "Recovery at scale").
	DefaultReconcilerMemory  = LambdaMBPerVCPU
	DefaultReconcilerTimeout = 300
	// DefaultReconcilerMaxWorkers keeps a 16-shard index at 2 shards a
	// worker (DESIGN.md, "Recovery at scale").
	DefaultReconcilerMaxWorkers    = 8
	DefaultLogRetentionDays        = 14
	DefaultBatchSize               = 100
	DefaultParallelizationFactor   = 1
	DefaultMaximumRetryAttempts    = 10
	DefaultMaximumRecordAgeSeconds = -1
	DefaultBisectBatchOnError      = true
	DefaultQueueRetentionSeconds   = 14 * 24 * 3600
	DefaultScheduleExpression      = "rate(5 minutes)"
	DefaultScheduleTimezone        = "UTC"
	// Runtime of both functions: the relay is a Go binary named bootstrap.
	Runtime = "provided.al2023"
	// Handler is ignored by provided runtimes but required by the API.
	Handler = "bootstrap"
)

// Spec is the desired configuration of a pipeline. The zero value of a field
// means its default (see WithDefaults); pointer fields are those whose zero
// is a meaningful setting.
type Spec struct {
	// Name prefixes the name of every component. Changing it replaces the
	// pipeline.
	Name string
	// Table is the outbox table.
	Table TableSpec
	// Target is where the relay publishes.
	Target TargetSpec
	// PublishedAction is what the relay does with a published item: mark
	// (default) or delete.
	PublishedAction config.Action
	// PublishedTTL is how long marked items are kept (nil: 720h; 0: forever).
	PublishedTTL *time.Duration
	// Ordered is the relay's ordered mode: each ordering key's events are
	// published in sequence. Only for a FIFO queue or topic.
	Ordered bool
	// Architecture of both functions: arm64 (default) or x86_64.
	Architecture Architecture
	// Relay is the function that the stream invokes.
	Relay FunctionSpec
	// Controls are the tracing, logging, KMS and VPC settings of both
	// functions.
	Controls LambdaControls
	// IAM applies to every role the pipeline creates.
	IAM IAMSpec
	// Mapping is the event source mapping of the relay on the stream.
	Mapping MappingSpec
	// DeadLetterQueue receives the metadata of batches that ran out of
	// retries or age.
	DeadLetterQueue QueueSpec
	// Reconciler republishes pending events that the stream missed.
	Reconciler ReconcilerSpec
	// Alarms are the CloudWatch alarms on the pipeline; none by default.
	Alarms AlarmsSpec
	// ClaimCheck is the bucket of the events too large to publish whole;
	// none by default.
	ClaimCheck ClaimCheckSpec
	// MultiRegion makes the pipeline one of a multi-Region outbox on a
	// global table; a single-Region pipeline by default.
	MultiRegion MultiRegionSpec
	// Tags are applied to every component that takes tags (not to an
	// adopted table).
	Tags map[string]string
	// ForceDestroy lets Delete remove a dedicated table that still holds
	// PENDING or FAILED events, which are then lost. Without it, Delete
	// refuses (see UndeliveredError).
	ForceDestroy bool
}

// TableSpec describes the outbox table.
type TableSpec struct {
	// Existing makes the pipeline adopt the table called Name instead of
	// creating one. Changing it replaces the pipeline.
	Existing bool
	// Name of the table; required when Existing, otherwise Spec.Name
	// followed by "-outbox".
	Name string
	// PartitionKey and SortKey are the key attribute names (string keys);
	// defaults PK and SK. An adopted table must have these keys.
	PartitionKey string
	SortKey      string
	// SortKeyPrefix starts the sort key of every outbox item; default
	// OUTBOX#.
	SortKeyPrefix string
	// TTLAttribute holds the expiry of published items; default expiresAt.
	// An adopted table that already has TTL keeps its own attribute.
	TTLAttribute string
	// PendingIndexName is the sparse index of pending items; default
	// outbox-pending.
	PendingIndexName string
	// PendingShards is the number of partitions of the pending index;
	// default 16.
	PendingShards int
	// PendingIndexDisabled leaves the pending index out: allowed only for
	// a dedicated table with PublishedAction delete, where the table holds
	// only undelivered items and the reconciler scans it.
	PendingIndexDisabled bool
	// DeletionProtection of a dedicated table; nil means true. Delete turns
	// it off only once the table holds no undelivered event (or under
	// ForceDestroy).
	DeletionProtection *bool
	// PointInTimeRecovery of a dedicated table; nil means true.
	PointInTimeRecovery *bool
	// KMSKeyARN encrypts a dedicated table with a customer managed key;
	// empty uses the AWS owned key. Changed in place.
	KMSKeyARN string
	// ReplicaRegions makes a dedicated table a global table (version
	// 2019.11.21, multi-Region eventual consistency) with a replica in
	// each of these Regions besides its own, and a NEW_AND_OLD_IMAGES
	// stream, as global tables need. Changed in place: a replica is
	// added or removed. Not allowed on an adopted table, whose replicas
	// are its owner's.
	ReplicaRegions []string
}

// TargetSpec is the publishing target: a kind of package target (an
// EventBridge bus, an SNS topic, an SQS queue) and its settings.
type TargetSpec = targetkind.Settings

// FunctionSpec configures one function.
type FunctionSpec struct {
	// MemorySize in MB, 128 to 10240.
	MemorySize int32
	// Timeout in seconds, 1 to 900.
	Timeout int32
	// ReservedConcurrency caps the function's concurrency; nil leaves it
	// unreserved.
	ReservedConcurrency *int32
	// LogRetentionDays of the function's log group; default 14.
	LogRetentionDays int32
}

// MappingSpec configures the event source mapping of the relay.
type MappingSpec struct {
	// BatchSize, 1 to 10000; default 100.
	BatchSize int32
	// MaximumBatchingWindowSeconds, 0 to 300.
	MaximumBatchingWindowSeconds int32
	// ParallelizationFactor, 1 to 10; default 1.
	ParallelizationFactor int32
	// MaximumRetryAttempts, -1 (infinite) to 10000; default 10.
	MaximumRetryAttempts *int32
	// MaximumRecordAgeSeconds, -1 (infinite) or 60 to 604800; default -1.
	MaximumRecordAgeSeconds *int32
	// BisectBatchOnFunctionError; default true.
	BisectBatchOnFunctionError *bool
}

// QueueSpec configures the dead-letter queue.
type QueueSpec struct {
	// MessageRetentionSeconds, 60 to 1209600; default 1209600 (14 days).
	MessageRetentionSeconds int32
	// KMSMasterKeyID encrypts with a KMS key; empty uses SQS managed
	// encryption.
	KMSMasterKeyID string
}

// ReconcilerSpec configures the reconciler.
type ReconcilerSpec struct {
	// Disabled leaves the reconciler out (it is enabled by default).
	Disabled bool
	// ScheduleExpression of the EventBridge Scheduler schedule; default
	// rate(5 minutes).
	ScheduleExpression string
	// MinAge is how old a pending event must be before the reconciler
	// republishes it; default 5m.
	MinAge time.Duration
	// Function configures the reconciler function.
	Function FunctionSpec
	// ScheduleTimezone is the IANA time zone of a cron schedule; default
	// UTC.
	ScheduleTimezone string
	// FlexibleTimeWindowMinutes lets Scheduler start a run up to that many
	// minutes late (1 to 1440); 0 turns the flexible window off.
	FlexibleTimeWindowMinutes int32
	// ScheduleGroup is the existing EventBridge Scheduler group of the
	// schedule; default "default". Changing it moves the schedule.
	ScheduleGroup string
	// MaxWorkers bounds the reconciler's runs at once under a backlog,
	// the workers it starts included; default DefaultReconcilerMaxWorkers,
	// 1 for no workers.
	MaxWorkers int32
	// MaxEventsPerSecond is the reconciler's publishing rate, all its runs
	// together; 0, the default, is the target kind's
	// (config.DefaultMaxEventsPerSecond).
	MaxEventsPerSecond int32
}

// CheckInPlace returns an error when the pipeline recorded in st has
// another name than s: a new name replaces the pipeline.
func (s Spec) CheckInPlace(st State) error {
	if st.Name != "" && st.Name != s.Name {
		return fmt.Errorf("updating outbox pipeline (%s): the name changed to %s, which requires replacing the pipeline", st.Name, s.Name)
	}
	return nil
}

// ReplacementFields returns the fields whose change, from one Spec to the
// next, AWS cannot apply in place: the pipeline must be replaced. Everything
// else is updated by Update.
func ReplacementFields(from, to Spec) []string {
	from, to = from.WithDefaults(), to.WithDefaults()
	var fields awsops.Fields
	add := fields.Add
	add(from.Name != to.Name, "Name")
	add(from.Table.Existing != to.Table.Existing, "Table.Existing")
	add(from.Table.Name != to.Table.Name, "Table.Name")
	add(from.Table.PartitionKey != to.Table.PartitionKey, "Table.PartitionKey")
	add(from.Table.SortKey != to.Table.SortKey, "Table.SortKey")
	// A dedicated table's pending index is rebuilt in place under its new
	// name (see ensurePendingIndex); an adopted table's index and TTL are
	// its owner's, so a change there is a replacement rather than a silent
	// edit of someone else's table.
	add(to.Table.Existing && from.Table.PendingIndexName != to.Table.PendingIndexName, "Table.PendingIndexName")
	add(from.Table.TTLAttribute != to.Table.TTLAttribute, "Table.TTLAttribute")
	return fields
}

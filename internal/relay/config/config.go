// Package config reads and validates the relay's configuration from the
// environment. It is read once, at cold start; an invalid value stops the
// function with an error that names the variable and the expected form.
//
// # Environment variables
//
//	Variable                   Default              Form
//	OUTBOX_TABLE_NAME          (required)           DynamoDB table name
//	OUTBOX_PARTITION_KEY       PK                   attribute name (string key)
//	OUTBOX_SORT_KEY            SK                   attribute name (string key)
//	OUTBOX_SORT_KEY_PREFIX     OUTBOX#              prefix of every outbox item's sort key
//	OUTBOX_TTL_ATTRIBUTE       expiresAt            attribute name (the table's TTL attribute)
//	OUTBOX_PENDING_INDEX_NAME  outbox-pending       name of the sparse pending index
//	OUTBOX_PENDING_SHARDS      16                   whole number from 1 to 256
//	OUTBOX_TARGET              eventbridge          a kind of package target, whose variables it lists
//	OUTBOX_PUBLISHED_ACTION    mark                 mark or delete
//	OUTBOX_PUBLISHED_TTL       720h                 Go duration; 0 = no expiry (mark)
//	OUTBOX_RECONCILE_MIN_AGE   5m                   Go duration
//	OUTBOX_FORMER_SORT_KEY_PREFIXES  (none)         comma-separated former prefixes still accepted (spaces are part of a prefix)
//	OUTBOX_RECONCILE_SHARDS    OUTBOX_PENDING_SHARDS  pending index shards the reconciler queries (≥ OUTBOX_PENDING_SHARDS)
//	OUTBOX_PENDING_INDEX_ENABLED  true              false: no pending index; the reconciler scans the (dedicated, delete-mode) table
//	OUTBOX_ORDERED             false                true: ordered mode, each ordering key's events published in sequence (FIFO targets only)
//	OUTBOX_CLAIM_BUCKET        (none)               the claim-check bucket: the reconciler sweeps its uncommitted objects after each run
//	OUTBOX_CLAIM_SWEEP_WINDOW  2h                   Go duration: how far back each sweep looks (≥ twice the reconciler's period)
//	OUTBOX_RECONCILE_MAX_WORKERS  1                 reconciler runs at once under a backlog, 1 to 100 (1: no workers)
//	OUTBOX_RECONCILE_MAX_EVENTS_PER_SECOND  per kind  events the reconciler's runs publish a second together (DefaultMaxEventsPerSecond)
//	OUTBOX_REGIONS             (none)               comma-separated Regions of a multi-Region pipeline, the primary first: the reconciler publishes its own Region's events, and those of the silent Regions it takes over
//	OUTBOX_TAKEOVER_AFTER      15m                  Go duration: how old a peer Region's heartbeat gets before the peer is silent and taken over (a few reconciler intervals)
//	OUTBOX_TAKEOVER_SETTLE     30s                  Go duration below OUTBOX_TAKEOVER_AFTER: how long a successor waits between writing its takeover claim and reading it back
//
// The table defaults are those of package outbox. The variables of a target
// kind (package target) are read only for that kind, and
// OUTBOX_PUBLISHED_TTL is ignored when the published action is delete.
//
// The standard AWS variables (AWS_REGION, AWS_ENDPOINT_URL and the service
// specific AWS_ENDPOINT_URL_* variables, credentials) are read by the AWS SDK,
// not by this package.
package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/takeover"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Names of the environment variables.
const (
	EnvTableName        = "OUTBOX_TABLE_NAME"
	EnvPartitionKey     = "OUTBOX_PARTITION_KEY"
	EnvSortKey          = "OUTBOX_SORT_KEY"
	EnvSortKeyPrefix    = "OUTBOX_SORT_KEY_PREFIX"
	EnvTTLAttribute     = "OUTBOX_TTL_ATTRIBUTE"
	EnvPendingIndexName = "OUTBOX_PENDING_INDEX_NAME"
	EnvPendingShards    = "OUTBOX_PENDING_SHARDS"
	EnvTarget           = targetkind.EnvTarget
	EnvEventBus         = targetkind.EnvEventBus
	EnvTopicARN         = targetkind.EnvTopicARN
	EnvPublishedAction  = "OUTBOX_PUBLISHED_ACTION"
	EnvPublishedTTL     = "OUTBOX_PUBLISHED_TTL"
	EnvReconcileMinAge  = "OUTBOX_RECONCILE_MIN_AGE"
	// EnvFormerSortKeyPrefixes lists, comma-separated, the sort key prefixes
	// that OUTBOX_SORT_KEY_PREFIX replaced while items with them may still be
	// undelivered (outbox.Table.FormerSortKeyPrefixes).
	EnvFormerSortKeyPrefixes = "OUTBOX_FORMER_SORT_KEY_PREFIXES"
	// EnvReconcileShards is how many pending index shards the reconciler
	// queries: at least OUTBOX_PENDING_SHARDS, more after the shard count was
	// lowered while the higher shards may still hold items.
	EnvReconcileShards = "OUTBOX_RECONCILE_SHARDS"
	// EnvPendingIndexEnabled is "false" for a pipeline without a pending
	// index (dedicated table, delete mode): the reconciler then scans.
	EnvPendingIndexEnabled = "OUTBOX_PENDING_INDEX_ENABLED"
	// EnvOrdered is "true" for ordered mode: an event with a sequence is
	// published only once its key's earlier events are. Only a FIFO queue
	// or topic keeps that order to the consumer.
	EnvOrdered = "OUTBOX_ORDERED"
	// EnvClaimBucket is the claim-check bucket whose uncommitted objects
	// the reconciler removes (package claimsweep); unset, there is no sweep.
	EnvClaimBucket = "OUTBOX_CLAIM_BUCKET"
	// EnvClaimSweepWindow is the sweep's window of object keys.
	EnvClaimSweepWindow = "OUTBOX_CLAIM_SWEEP_WINDOW"
	// EnvReconcileMaxWorkers bounds the reconciler's runs at once, the
	// workers it starts under a backlog included.
	EnvReconcileMaxWorkers = "OUTBOX_RECONCILE_MAX_WORKERS"
	// EnvReconcileMaxEventsPerSecond is the reconciler's publishing rate,
	// all its runs together.
	EnvReconcileMaxEventsPerSecond = "OUTBOX_RECONCILE_MAX_EVENTS_PER_SECOND"
	// EnvRegions lists, comma-separated, the Regions of a multi-Region
	// pipeline, the primary first; unset for a single-Region one.
	EnvRegions = "OUTBOX_REGIONS"
	// EnvTakeoverAfter is how old a peer Region's heartbeat gets before the
	// peer is silent and its successor takes it over.
	EnvTakeoverAfter = "OUTBOX_TAKEOVER_AFTER"
	// EnvTakeoverSettle is how long a successor waits between writing its
	// takeover claim and reading it back.
	EnvTakeoverSettle = "OUTBOX_TAKEOVER_SETTLE"
)

// Target is the kind of target events are published to.
type Target = targetkind.Type

// Targets.
const (
	TargetEventBridge = targetkind.EventBridge
	TargetSNS         = targetkind.SNS
)

// Action is what happens to an item once its event is published.
type Action string

// Published actions.
const (
	// ActionMark sets the item's status to PUBLISHED, with an expiry.
	ActionMark Action = "mark"
	// ActionDelete deletes the item.
	ActionDelete Action = "delete"
)

// Defaults of the relay-specific settings.
const (
	DefaultEventBus         = targetkind.DefaultEventBus
	DefaultPublishedTTL     = 720 * time.Hour
	DefaultReconcileMinAge  = 5 * time.Minute
	DefaultClaimSweepWindow = 2 * time.Hour
	// DefaultTakeoverAfter is the takeover delay of a reconciler run every
	// 5 minutes, the default schedule (takeover.DefaultTakeoverAfter).
	DefaultTakeoverAfter = takeover.IntervalsBeforeTakeover * 5 * time.Minute
)

// Config is the relay's validated configuration.
type Config struct {
	// Table is the outbox table, with defaults applied.
	Table outbox.Table
	// Target is where events are published.
	Target targetkind.Settings
	// PublishedAction says whether published items are marked or deleted.
	PublishedAction Action
	// PublishedTTL is how long marked items are kept; 0 means forever.
	PublishedTTL time.Duration
	// ReconcileMinAge is the default age a pending event must reach before the
	// reconciler republishes it.
	ReconcileMinAge time.Duration
	// ReconcileShards is the number of pending index shards the reconciler
	// queries, 0 to ReconcileShards-1: at least Table.PendingShards.
	ReconcileShards int
	// Ordered is true in ordered mode: events with a sequence are published
	// in sequence per ordering key (package batch's gate).
	Ordered bool
	// ClaimBucket is the claim-check bucket that the reconciler sweeps;
	// empty for none.
	ClaimBucket string
	// ClaimSweepWindow is how far back a sweep looks.
	ClaimSweepWindow time.Duration
	// ReconcileMaxWorkers bounds the reconciler's runs at once; 1 starts
	// no worker.
	ReconcileMaxWorkers int
	// ReconcileMaxEventsPerSecond is the reconciler's publishing rate, all
	// its runs together.
	ReconcileMaxEventsPerSecond int
	// Regions are the peer Regions of a multi-Region pipeline, the
	// primary first; nil for a single-Region pipeline, which publishes
	// every event whatever its origin.
	Regions []string
	// TakeoverAfter is how old a peer's heartbeat gets before the peer is
	// silent; TakeoverSettle how long a successor's claim settles
	// (package takeover). Both matter only with Regions.
	TakeoverAfter  time.Duration
	TakeoverSettle time.Duration
}

// MaxReconcileWorkers bounds OUTBOX_RECONCILE_MAX_WORKERS.
const MaxReconcileWorkers = 100

// DefaultMaxEventsPerSecond is the reconciler's publishing rate for target t,
// under AWS's default quotas, which the application's own publishing shares
// (DESIGN.md, "Recovery at scale"): 3,000 events a second for a standard
// queue (nearly unlimited), 1,000 for every other kind: a tenth of
// EventBridge's PutEvents quota in us-east-1 and under its lowest
// documented ones, a third of an SNS FIFO topic's 3,000 messages a second
// and of an SQS FIFO queue's 3,000 in batches of 10.
func DefaultMaxEventsPerSecond(t targetkind.Settings) int {
	if t = t.WithDefaults(); t.Type == targetkind.SQS && !t.FIFO() {
		return 3000
	}
	return 1000
}

// relaySettings opens the message of every error of the relay's
// environment: a *validation.Error whose Field is the variable.
const relaySettings validation.Subject = "relay configuration"

// invalid reports the variable name, set to value, as invalid.
func invalid(name, value, problem, fix string) error {
	return relaySettings.InvalidValue(name, value, problem, fix)
}

var (
	// Event bus names: EventBridge's pattern for EventBusName.
	attributeName = regexp.MustCompile(`^[^\s]{1,255}$`)
)

// FromEnv reads the configuration with getenv (os.Getenv in the function) and
// validates it: each variable of the table in turn, the first invalid one
// stopping the read with its *validation.Error.
func FromEnv(getenv func(string) string) (Config, error) {
	var c Config
	for _, v := range variables {
		value := getenv(v.name)
		if !v.raw {
			value = strings.TrimSpace(value)
		}
		if err := v.set(&c, value); err != nil {
			return Config{}, err
		}
		if v.then != nil {
			if err := v.then(&c, getenv); err != nil {
				return Config{}, err
			}
		}
	}
	return c, nil
}

// variable is one environment variable of the relay: how its value is
// parsed, validated and stored in the configuration.
type variable struct {
	name string
	// raw keeps the value's spaces, which are part of a prefix; other
	// values are trimmed.
	raw bool
	// set parses and validates the value ("" when unset) into c.
	set func(c *Config, value string) error
	// then, when set, checks what the variables read so far say together.
	then func(c *Config, getenv func(string) string) error
}

// variables is the table of the relay's variables, in the order they are
// read: the table's, then the relay's, each able to rely on those before it.
var variables = []variable{
	{name: EnvTableName, set: setTableName},
	{name: EnvPartitionKey, set: attribute(EnvPartitionKey, func(t *outbox.Table) *string { return &t.PartitionKey })},
	{name: EnvSortKey, set: attribute(EnvSortKey, func(t *outbox.Table) *string { return &t.SortKey })},
	{name: EnvTTLAttribute, set: attribute(EnvTTLAttribute, func(t *outbox.Table) *string { return &t.TTLAttribute })},
	{name: EnvPendingIndexName, set: attribute(EnvPendingIndexName, func(t *outbox.Table) *string { return &t.PendingIndexName })},
	{name: EnvSortKeyPrefix, raw: true, set: func(c *Config, v string) error { c.Table.SortKeyPrefix = v; return nil }},
	{name: EnvPendingShards, set: setPendingShards},
	{name: EnvFormerSortKeyPrefixes, raw: true, set: setFormerPrefixes},
	{name: EnvPendingIndexEnabled, set: setPendingIndexEnabled, then: completeTable},
	{name: EnvReconcileShards, set: setReconcileShards},
	{name: EnvTarget, set: func(*Config, string) error { return nil }, then: setTarget},
	{name: EnvPublishedAction, set: oneOf(EnvPublishedAction, "is not a known action", func(c *Config) *Action { return &c.PublishedAction }, ActionMark, ActionDelete),
		then: pendingIndexNeedsDelete},
	{name: EnvPublishedTTL, set: duration(EnvPublishedTTL, DefaultPublishedTTL, "use a Go duration such as \"720h\", or \"0\" to keep published items forever",
		func(c *Config) *time.Duration { return &c.PublishedTTL })},
	{name: EnvOrdered, set: setOrdered, then: orderedNeedsFIFO},
	{name: EnvReconcileMinAge, set: duration(EnvReconcileMinAge, DefaultReconcileMinAge, "use a Go duration such as \"5m\"",
		func(c *Config) *time.Duration { return &c.ReconcileMinAge })},
	{name: EnvClaimBucket, set: func(c *Config, v string) error { c.ClaimBucket = v; return nil }},
	{name: EnvClaimSweepWindow, set: duration(EnvClaimSweepWindow, DefaultClaimSweepWindow, "use a Go duration such as \"2h\", at least twice the reconciler's period",
		func(c *Config) *time.Duration { return &c.ClaimSweepWindow })},
	{name: EnvReconcileMaxWorkers, set: wholeNumber(EnvReconcileMaxWorkers, 1, 1, MaxReconcileWorkers, func(c *Config) *int { return &c.ReconcileMaxWorkers })},
	{name: EnvReconcileMaxEventsPerSecond, set: func(c *Config, v string) error {
		return wholeNumber(EnvReconcileMaxEventsPerSecond, DefaultMaxEventsPerSecond(c.Target), 1, 1_000_000, func(c *Config) *int { return &c.ReconcileMaxEventsPerSecond })(c, v)
	}},
	{name: EnvRegions, set: setRegions},
	{name: EnvTakeoverAfter, set: duration(EnvTakeoverAfter, DefaultTakeoverAfter, "use a Go duration such as \"15m\", a few reconciler intervals",
		func(c *Config) *time.Duration { return &c.TakeoverAfter })},
	{name: EnvTakeoverSettle, set: duration(EnvTakeoverSettle, takeover.DefaultSettle, "use a Go duration such as \"30s\", longer than replication between the Regions takes",
		func(c *Config) *time.Duration { return &c.TakeoverSettle }), then: settleBelowTakeover},
}

// settleBelowTakeover refuses a takeover that could not settle before the
// Region it took over is silent again to its peers.
func settleBelowTakeover(c *Config, getenv func(string) string) error {
	if c.TakeoverAfter <= 0 {
		return invalid(EnvTakeoverAfter, getenv(EnvTakeoverAfter), "is zero", "use a Go duration such as \"15m\", a few reconciler intervals")
	}
	if c.TakeoverSettle >= c.TakeoverAfter {
		return invalid(EnvTakeoverSettle, c.TakeoverSettle.String(), "is not below "+EnvTakeoverAfter+" "+c.TakeoverAfter.String(),
			"lower it, or raise "+EnvTakeoverAfter)
	}
	return nil
}

// wholeNumber reads a whole number from lowest to highest; unset is def.
func wholeNumber(name string, def, lowest, highest int, field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "" {
			*field(c) = def
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lowest || n > highest {
			return invalid(name, v, "is out of range", fmt.Sprintf("use a whole number from %d to %d", lowest, highest))
		}
		*field(c) = n
		return nil
	}
}

func setRegions(c *Config, v string) error {
	if v == "" {
		return nil
	}
	regions := strings.Split(v, ",")
	for i := range regions {
		regions[i] = strings.TrimSpace(regions[i])
	}
	if problem, fix := validation.PeerRegions(regions); problem != "" {
		return invalid(EnvRegions, v, problem, fix)
	}
	c.Regions = regions
	return nil
}

func setTableName(c *Config, v string) error {
	if v == "" {
		return invalid(EnvTableName, "", "is not set", "set it to the name of the DynamoDB table that holds the outbox items")
	}
	c.Table.Name = v
	return nil
}

// attribute sets an attribute or index name of the table: empty keeps the
// default.
func attribute(name string, field func(*outbox.Table) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v != "" && !attributeName.MatchString(v) {
			return invalid(name, v, "is not a valid name", "use a name of 1 to 255 characters without spaces")
		}
		*field(&c.Table) = v
		return nil
	}
}

func setPendingShards(c *Config, v string) error {
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > outbox.MaxPendingShards {
		return invalid(EnvPendingShards, v, "is out of range", fmt.Sprintf("use a whole number from 1 to %d", outbox.MaxPendingShards))
	}
	c.Table.PendingShards = n
	return nil
}

func setFormerPrefixes(c *Config, v string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	for _, p := range strings.Split(v, ",") {
		if strings.TrimSpace(p) == "" {
			return invalid(EnvFormerSortKeyPrefixes, v, "has an empty prefix", `use comma-separated prefixes such as "OUTBOX#,EVT#"`)
		}
		c.Table.FormerSortKeyPrefixes = append(c.Table.FormerSortKeyPrefixes, p)
	}
	return nil
}

func setPendingIndexEnabled(c *Config, v string) error {
	switch strings.ToLower(v) {
	case "", "true":
	case "false":
		c.Table.NoPendingIndex = true
	default:
		return invalid(EnvPendingIndexEnabled, v, "is not a boolean", `use "true" or "false"`)
	}
	return nil
}

// completeTable applies the table's defaults and validates it once all of
// its variables are read; the reconciler queries its shards by default.
func completeTable(c *Config, _ func(string) string) error {
	c.Table = c.Table.WithDefaults()
	if err := c.Table.Validate(); err != nil {
		return tableError(c.Table, err)
	}
	c.ReconcileShards = c.Table.PendingShards
	return nil
}

func setReconcileShards(c *Config, v string) error {
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < c.Table.PendingShards || n > outbox.MaxPendingShards {
		return invalid(EnvReconcileShards, v, "is out of range", fmt.Sprintf("use a whole number from %s (%d) to %d", EnvPendingShards, c.Table.PendingShards, outbox.MaxPendingShards))
	}
	c.ReconcileShards = n
	return nil
}

// setTarget reads the target: OUTBOX_TARGET and its kind's variables.
func setTarget(c *Config, getenv func(string) string) error {
	t, err := targetkind.FromEnv(relaySettings, getenv)
	c.Target = t
	return err
}

// oneOf reads one of values, in any case; empty is the first.
func oneOf[T ~string](name, problem string, field func(*Config) *T, values ...T) func(*Config, string) error {
	quoted := make([]string, len(values))
	for i, x := range values {
		quoted[i] = strconv.Quote(string(x))
	}
	return func(c *Config, v string) error {
		if v == "" {
			*field(c) = values[0]
			return nil
		}
		for _, x := range values {
			if T(strings.ToLower(v)) == x {
				*field(c) = x
				return nil
			}
		}
		return invalid(name, v, problem, "use "+strings.Join(quoted, " or "))
	}
}

// pendingIndexNeedsDelete refuses a table without pending index unless
// published items are deleted.
func pendingIndexNeedsDelete(c *Config, getenv func(string) string) error {
	if !c.Table.NoPendingIndex || c.PublishedAction == ActionDelete {
		return nil
	}
	return invalid(EnvPendingIndexEnabled, strings.TrimSpace(getenv(EnvPendingIndexEnabled)), "is false while "+EnvPublishedAction+" is "+string(c.PublishedAction), fmt.Sprintf(`set it to "true", or set %s to "delete": without the pending index the reconciler scans the table, which must then hold only pending and failed items`, EnvPublishedAction))
}

func setOrdered(c *Config, v string) error {
	switch strings.ToLower(v) {
	case "", "false":
	case "true":
		c.Ordered = true
	default:
		return invalid(EnvOrdered, v, "is not a boolean", `use "true" or "false"`)
	}
	return nil
}

// orderedNeedsFIFO refuses ordered mode for a target that does not keep
// the order of a group, and for a table whose sort key prefixes would make
// the cursor items look like outbox items.
func orderedNeedsFIFO(c *Config, _ func(string) string) error {
	if !c.Ordered {
		return nil
	}
	if !c.Target.FIFO() {
		return invalid(EnvOrdered, "true", "is set while the target is "+c.Target.Describe()+", which does not keep an order per key",
			fmt.Sprintf("publish to an SNS FIFO topic or an SQS FIFO queue (an ARN ending in .fifo) with %s, or set %s to \"false\"", EnvTarget, EnvOrdered))
	}
	if err := c.Table.OrderingProblem(); err != nil {
		return tableError(c.Table, err)
	}
	return nil
}

// duration reads a Go duration that is not negative; empty is def.
func duration(name string, def time.Duration, fix string, field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d := def
		if v != "" {
			var err error
			if d, err = time.ParseDuration(v); err != nil {
				return invalid(name, v, "is not a duration", fix)
			}
			if d < 0 {
				return invalid(name, v, "is negative", fix)
			}
		}
		*field(c) = d
		return nil
	}
}

// tableError turns an outbox.ConfigError into an error naming the variable.
func tableError(t outbox.Table, err error) error {
	var ce *outbox.ConfigError
	if !errors.As(err, &ce) {
		return fmt.Errorf("relay configuration: %w", err)
	}
	env, value := EnvTableName, t.Name
	switch ce.Field {
	case "PartitionKey":
		env, value = EnvPartitionKey, t.PartitionKey
	case "SortKey":
		env, value = EnvSortKey, t.SortKey
	case "SortKeyPrefix":
		env, value = EnvSortKeyPrefix, t.SortKeyPrefix
	case "TTLAttribute":
		env, value = EnvTTLAttribute, t.TTLAttribute
	case "PendingShards":
		env, value = EnvPendingShards, strconv.Itoa(t.PendingShards)
	case "NoPendingIndex":
		env, value = EnvPendingIndexEnabled, "false"
	case "FormerSortKeyPrefixes":
		env, value = EnvFormerSortKeyPrefixes, strings.Join(t.FormerSortKeyPrefixes, ",")
	}
	return invalid(env, value, ce.Problem, ce.Fix)
}

package outbox

import (
	"cmp"
	"fmt"
	"strings"
)

// Attribute names of the outbox item. Key and TTL attribute names are
// configurable per table (see Table); these are fixed by the contract.
const (
	AttrEventID      = "eventId"
	AttrSource       = "source"
	AttrDetailType   = "detailType"
	AttrDetail       = "detail"
	AttrOccurredAt   = "occurredAt"
	AttrStatus       = "status"
	AttrPendingShard = "outboxPendingShard"
	AttrPendingSince = "outboxPendingSince"
	AttrTraceHeader  = "traceHeader"
	AttrAttempts     = "attempts"
	AttrLastError    = "lastError"
	AttrPublishedAt  = "publishedAt"
	AttrFailedAt     = "failedAt"
	AttrVersion      = "outboxVersion"
	// AttrNextAttemptAt (Unix milliseconds) is set by the relay when it takes
	// an item to publish it: until then no other relay invocation or
	// reconciler run publishes the item. It doubles as the backoff of an
	// item whose publishing or marking keeps failing.
	AttrNextAttemptAt = "nextAttemptAt"
	// AttrOrderingKey is the ordering key of an ordered event: the aggregate
	// whose events are published in sequence. On the key's sequence item it
	// repeats the key.
	AttrOrderingKey = "outboxOrderingKey"
	// AttrSequence is, on an ordered event, its number among the events of
	// its ordering key (from 1, without gaps); on the key's sequence item
	// (sort key SequenceSortKey), the last number given out.
	AttrSequence = "outboxSequence"
	// AttrPublishedSequence is, on a key's cursor item (sort key
	// CursorSortKey), the last sequence of the key published: every event of
	// the key up to it was accepted by the target, in order.
	AttrPublishedSequence = "outboxPublishedSequence"
	// AttrBlockedSequence is, on a key's cursor item, the sequence of the
	// key's FAILED event that the later events wait behind; it counts only
	// while it is AttrPublishedSequence + 1.
	AttrBlockedSequence = "outboxBlockedSequence"
	// AttrStartedSequence is, on a key's cursor item, the sequence at which
	// the reconciler started the cursor of a key whose earlier events were
	// published outside ordered mode.
	AttrStartedSequence = "outboxStartedSequence"
	// AttrSkippedAt is when an operator skipped an ordered event.
	AttrSkippedAt = "skippedAt"
	// AttrOrigin is the AWS Region the event was written in: the Region of
	// the writer's DynamoDB client. On a global table every replica holds
	// every event, and the origin says which Region's pipeline publishes
	// it. Items written without it belong to the Region they are found in.
	AttrOrigin = "outboxOrigin"
)

// Defaults of a Table.
const (
	DefaultPartitionKey     = "PK"
	DefaultSortKey          = "SK"
	DefaultSortKeyPrefix    = "OUTBOX#"
	DefaultTTLAttribute     = "expiresAt"
	DefaultPendingIndexName = "outbox-pending"
	DefaultPendingShards    = 16
	// MaxPendingShards bounds the reconciler's fan-out: one Query per shard.
	MaxPendingShards = 256
	// PendingShardPrefix starts every value of the pending index partition key.
	PendingShardPrefix = "PENDING#"
	// ContractVersion is written to every item as AttrVersion.
	ContractVersion = 1
)

// Status is the lifecycle state of an outbox item.
type Status string

// Statuses of an outbox item.
const (
	StatusPending   Status = "PENDING"
	StatusPublished Status = "PUBLISHED"
	StatusFailed    Status = "FAILED"
	// StatusSkipped is an ordered event that an operator skipped (SkipActions)
	// so that the later events of its key could be published; it is kept,
	// without expiry, for inspection.
	StatusSkipped Status = "SKIPPED"
)

// Layout says where outbox items live.
type Layout string

const (
	// LayoutDedicated stores events in a table of their own.
	LayoutDedicated Layout = "dedicated"
	// LayoutShared stores each event next to its aggregate, under the
	// aggregate's partition key, in the application's own table.
	LayoutShared Layout = "shared"
)

// Table describes a table that holds outbox items. The zero value of every
// field but Name means its default; call WithDefaults to fill them in.
type Table struct {
	// Name of the DynamoDB table.
	Name string
	// Layout of the table; dedicated by default.
	Layout Layout
	// PartitionKey and SortKey are the key attribute names (string keys).
	PartitionKey string
	SortKey      string
	// SortKeyPrefix starts the sort key of every outbox item.
	SortKeyPrefix string
	// TTLAttribute holds the expiry (Unix seconds) of published items.
	TTLAttribute string
	// PendingIndexName is the sparse global secondary index of pending items.
	PendingIndexName string
	// PendingShards is the number of partitions of the pending index.
	PendingShards int
	// FormerSortKeyPrefixes are sort key prefixes that SortKeyPrefix replaced
	// while items written with them may still be undelivered. Items whose
	// sort key begins with one of them are still outbox items: the stream
	// filter lets their INSERTs through and the relay publishes them.
	FormerSortKeyPrefixes []string
	// NoPendingIndex is true for a table without the pending index: items
	// are written without the pending index keys, and the reconciler finds
	// old pending items with a parallel Scan. Valid only for a dedicated
	// table whose published items are deleted, so that the table holds only
	// pending and failed items and a Scan stays cheap. Writers of a pipeline
	// without the index may as well keep the keys (they cost nothing there):
	// an item written without them is not found through the index if the
	// index is turned on again, until it is requeued.
	NoPendingIndex bool
}

// WithDefaults returns t with every unset field set to its default.
func (t Table) WithDefaults() Table {
	t.Layout = cmp.Or(t.Layout, LayoutDedicated)
	t.PartitionKey = cmp.Or(t.PartitionKey, DefaultPartitionKey)
	t.SortKey = cmp.Or(t.SortKey, DefaultSortKey)
	t.SortKeyPrefix = cmp.Or(t.SortKeyPrefix, DefaultSortKeyPrefix)
	t.TTLAttribute = cmp.Or(t.TTLAttribute, DefaultTTLAttribute)
	t.PendingIndexName = cmp.Or(t.PendingIndexName, DefaultPendingIndexName)
	t.PendingShards = cmp.Or(t.PendingShards, DefaultPendingShards)
	return t
}

// Validate reports the first problem with t, naming the field and the fix.
// It expects defaults to have been applied.
func (t Table) Validate() error {
	switch {
	case t.Name == "":
		return &ConfigError{Field: "Name", Problem: "is empty", Fix: "set the DynamoDB table name"}
	case t.Layout != LayoutDedicated && t.Layout != LayoutShared:
		return &ConfigError{Field: "Layout", Problem: fmt.Sprintf("is %q", t.Layout), Fix: `use "dedicated" or "shared"`}
	case t.PartitionKey == t.SortKey:
		return &ConfigError{Field: "SortKey", Problem: "equals PartitionKey", Fix: "use two different key attribute names"}
	case t.PendingShards < 1 || t.PendingShards > MaxPendingShards:
		return &ConfigError{Field: "PendingShards", Problem: fmt.Sprintf("is %d", t.PendingShards), Fix: fmt.Sprintf("use a value from 1 to %d", MaxPendingShards)}
	case strings.TrimSpace(t.SortKeyPrefix) == "":
		return &ConfigError{Field: "SortKeyPrefix", Problem: "is blank", Fix: `use a distinctive prefix such as "OUTBOX#"`}
	case t.NoPendingIndex && t.Layout != LayoutDedicated:
		return &ConfigError{Field: "NoPendingIndex", Problem: "is set for a shared table", Fix: "use a dedicated table, or keep the pending index"}
	}
	for _, a := range []struct{ field, name string }{
		{"PartitionKey", t.PartitionKey}, {"SortKey", t.SortKey}, {"TTLAttribute", t.TTLAttribute},
	} {
		if _, reserved := contractAttributes[a.name]; reserved {
			return &ConfigError{Field: a.field, Problem: fmt.Sprintf("%q is an attribute of the outbox item", a.name), Fix: "choose another attribute name"}
		}
	}
	return nil
}

var contractAttributes = map[string]struct{}{
	AttrEventID: {}, AttrSource: {}, AttrDetailType: {}, AttrDetail: {}, AttrOccurredAt: {},
	AttrStatus: {}, AttrPendingShard: {}, AttrPendingSince: {}, AttrTraceHeader: {},
	AttrAttempts: {}, AttrLastError: {}, AttrPublishedAt: {}, AttrFailedAt: {}, AttrVersion: {},
	AttrNextAttemptAt: {}, AttrOrderingKey: {}, AttrSequence: {}, AttrTraceParent: {}, AttrTraceState: {},
	AttrPublishedSequence: {}, AttrBlockedSequence: {}, AttrStartedSequence: {}, AttrSkippedAt: {},
	AttrOrigin: {}, AttrLeaseOwner: {}, AttrLeaseExpires: {}, AttrLeaseShard: {},
}

// SortKeyFor returns the sort key value of the event with the given id.
func (t Table) SortKeyFor(eventID string) string { return t.SortKeyPrefix + eventID }

// SortKeyPrefixes returns the current sort key prefix followed by the former
// ones still accepted.
func (t Table) SortKeyPrefixes() []string {
	return append([]string{t.SortKeyPrefix}, t.FormerSortKeyPrefixes...)
}

// IsOutboxSortKey reports whether a sort key value belongs to an outbox item:
// it begins with the current or a former sort key prefix.
func (t Table) IsOutboxSortKey(sk string) bool {
	for _, p := range t.SortKeyPrefixes() {
		if strings.HasPrefix(sk, p) {
			return true
		}
	}
	return false
}

// PendingShardKey returns the pending index partition key of shard n.
func PendingShardKey(n int) string { return fmt.Sprintf("%s%d", PendingShardPrefix, n) }

// ShardFor returns the pending index shard of an event id: FNV-1a (32 bit) of
// the id modulo the shard count.
func (t Table) ShardFor(eventID string) int {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for i := 0; i < len(eventID); i++ {
		h ^= uint32(eventID[i])
		h *= prime
	}
	return int(h % uint32(t.PendingShards))
}

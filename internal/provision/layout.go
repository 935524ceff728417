package provision

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Layout is what the table may still hold from earlier settings of the
// pipeline: items under a former sort key prefix, and items in pending
// index shards above the current count. Until those are delivered, the
// stream filter and the relay accept the former prefixes, and the
// reconciler queries every shard that may hold items.
type Layout struct {
	// SortKeyPrefix and PendingShards are the settings last applied.
	SortKeyPrefix string `json:"SortKeyPrefix,omitempty"`
	PendingShards int    `json:"PendingShards,omitempty"`
	// FormerSortKeyPrefixes are prefixes replaced while items with them
	// may still be undelivered.
	FormerSortKeyPrefixes []string `json:"FormerSortKeyPrefixes,omitempty"`
	// ReconcileShards is the highest shard count that may still hold
	// items, when above PendingShards; 0 otherwise.
	ReconcileShards int `json:"ReconcileShards,omitempty"`
}

// outboxTable is the record contract with the former prefixes in st.
func (s Spec) outboxTable(st State) outbox.Table {
	t := s.OutboxTable()
	t.FormerSortKeyPrefixes = slices.Clone(st.Layout.FormerSortKeyPrefixes)
	return t
}

// environment is Spec.Environment with what the table may still hold.
func (s Spec) environment(st State) map[string]string {
	env := s.Environment(st.TTLAttribute)
	if p := st.Layout.FormerSortKeyPrefixes; len(p) > 0 {
		env[config.EnvFormerSortKeyPrefixes] = strings.Join(p, ",")
	}
	if n := st.Layout.ReconcileShards; n > s.OutboxTable().PendingShards {
		env[config.EnvReconcileShards] = strconv.Itoa(n)
	}
	return env
}

// trackLayout records in st the prefixes and shards that a change leaves
// behind, and forgets those that no item needs any more. It runs before the
// functions and the mapping are updated, which take it from st.
func (c *Provisioner) trackLayout(ctx context.Context, s Spec, st *State) error {
	t := s.OutboxTable()
	l := &st.Layout
	changed := false
	if l.SortKeyPrefix != "" && l.SortKeyPrefix != t.SortKeyPrefix && !slices.Contains(l.FormerSortKeyPrefixes, l.SortKeyPrefix) {
		l.FormerSortKeyPrefixes = append(l.FormerSortKeyPrefixes, l.SortKeyPrefix)
		changed = true
	}
	l.FormerSortKeyPrefixes = slices.DeleteFunc(l.FormerSortKeyPrefixes, func(p string) bool { return p == t.SortKeyPrefix })
	if l.PendingShards > t.PendingShards && l.PendingShards > l.ReconcileShards {
		l.ReconcileShards = l.PendingShards
		changed = true
	}
	l.SortKeyPrefix, l.PendingShards = t.SortKeyPrefix, t.PendingShards
	if l.ReconcileShards <= t.PendingShards || s.Table.PendingIndexDisabled {
		// Without the index the reconciler scans: shards do not matter.
		l.ReconcileShards = 0
	}
	if changed {
		// Writers still using the old settings may write until they are
		// redeployed: nothing is forgotten before the next apply.
		return nil
	}
	keep, shards, err := c.layoutInUse(ctx, st.TableName, t, *l)
	if err != nil {
		return fmt.Errorf("updating table (%s): %w", st.TableName, err)
	}
	l.FormerSortKeyPrefixes, l.ReconcileShards = keep, shards
	return nil
}

// layoutInUse returns the former prefixes of l that undelivered items
// still use, and the shard count that may still hold items (0 when no
// more than t.PendingShards).
func (c *Provisioner) layoutInUse(ctx context.Context, table string, t outbox.Table, l Layout) ([]string, int, error) {
	var keep []string
	for _, p := range l.FormerSortKeyPrefixes {
		u, err := c.CountUndelivered(ctx, table, []string{p})
		if err != nil {
			return nil, 0, err
		}
		if u.Total() > 0 {
			keep = append(keep, p)
		}
	}
	shards := 0
	if l.ReconcileShards > t.PendingShards {
		used, err := c.highestShardInUse(ctx, table, t, l.ReconcileShards)
		if err != nil {
			return nil, 0, err
		}
		if used+1 > t.PendingShards {
			shards = used + 1
		}
	}
	return keep, shards, nil
}

// highestShardInUse returns the highest pending index shard below limit,
// and at or above t.PendingShards, that holds an item; -1 when none does.
func (c *Provisioner) highestShardInUse(ctx context.Context, table string, t outbox.Table, limit int) (int, error) {
	for n := limit - 1; n >= t.PendingShards; n-- {
		out, err := c.DynamoDB.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(table), IndexName: aws.String(t.PendingIndexName),
			KeyConditionExpression:    aws.String("#shard = :shard"),
			ExpressionAttributeNames:  map[string]string{"#shard": outbox.AttrPendingShard},
			ExpressionAttributeValues: map[string]types.AttributeValue{":shard": &types.AttributeValueMemberS{Value: outbox.PendingShardKey(n)}},
			Limit:                     aws.Int32(1),
		})
		if err != nil {
			return 0, fmt.Errorf("querying shard %d of the pending index %s: %w", n, t.PendingIndexName, err)
		}
		if len(out.Items) > 0 {
			return n, nil
		}
	}
	return -1, nil
}

// layoutComponent records what the table may still hold from earlier
// settings, before the functions and the mapping take it from the State.
var layoutComponent = componentDef{
	Ensure: func(c *Provisioner, ctx context.Context, p *pass) error { return c.trackLayout(ctx, p.s, p.st) },
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

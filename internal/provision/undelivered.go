package provision

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Undelivered counts the outbox items of a table that have not reached
// the target: PENDING ones wait for the relay or the reconciler, FAILED
// ones for a person to requeue them.
type Undelivered struct {
	Pending int64
	Failed  int64
}

// Total is Pending + Failed.
func (u Undelivered) Total() int64 { return u.Pending + u.Failed }

func (u Undelivered) String() string {
	return fmt.Sprintf("%d PENDING and %d FAILED", u.Pending, u.Failed)
}

// UndeliveredError is returned by Delete when the dedicated table still
// holds undelivered events: deleting it would lose them.
type UndeliveredError struct {
	Pipeline string
	Table    string
	Undelivered
}

func (e *UndeliveredError) Error() string {
	return fmt.Sprintf("deleting outbox pipeline (%s): its table %s holds %s events, which deleting the table would lose. "+
		"Deliver them first: `outbox drain %s` waits until none is pending, and `outbox requeue %s` sends FAILED events again once their cause is fixed. "+
		"Or, to delete them, set force_destroy = true and apply it before destroying",
		e.Pipeline, e.Table, e.Undelivered, e.Pipeline, e.Pipeline)
}

// CountUndelivered counts the PENDING and FAILED items of the table
// recorded in st whose sort key begins with one of prefixes (every outbox
// item when prefixes is empty). It scans the table with a consistent read:
// FAILED items are not in the pending index.
func (c *Provisioner) CountUndelivered(ctx context.Context, table string, prefixes []string) (Undelivered, error) {
	var u Undelivered
	if table == "" {
		return u, nil
	}
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	cond := ""
	if len(prefixes) > 0 {
		desc, err := c.describeTable(ctx, table)
		if err != nil {
			return u, awsops.IgnoreNotFound(err)
		}
		names["#sk"] = rangeKey(desc)
		var terms []string
		for i, p := range prefixes {
			v := fmt.Sprintf(":prefix%d", i)
			values[v] = &types.AttributeValueMemberS{Value: p}
			terms = append(terms, "begins_with(#sk, "+v+")")
		}
		cond = "(" + strings.Join(terms, " OR ") + ")"
	}
	return c.countUndeliveredWhere(ctx, table, cond, names, values, "table "+table)
}

// countUndeliveredWhere counts the PENDING and FAILED items of table that
// also match cond (every such item when cond is empty), whose placeholders
// are in names and values. It scans with a consistent read: FAILED items
// are not in the pending index. A missing table has none. what names the
// counted items in the error.
func (c *Provisioner) countUndeliveredWhere(ctx context.Context, table, cond string,
	names map[string]string, values map[string]types.AttributeValue, what string,
) (Undelivered, error) {
	var u Undelivered
	names["#status"] = outbox.AttrStatus
	values[":pending"] = &types.AttributeValueMemberS{Value: string(outbox.StatusPending)}
	values[":failed"] = &types.AttributeValueMemberS{Value: string(outbox.StatusFailed)}
	filter := "#status IN (:pending, :failed)"
	if cond != "" {
		filter += " AND " + cond
	}
	p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String(filter), ProjectionExpression: aws.String("#status"),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if awsops.IsNotFound(err) {
			return Undelivered{}, nil // no table, no events
		}
		if err != nil {
			return u, fmt.Errorf("counting the undelivered events of %s: %w", what, err)
		}
		for _, item := range page.Items {
			if s, ok := item[outbox.AttrStatus].(*types.AttributeValueMemberS); ok && s.Value == string(outbox.StatusFailed) {
				u.Failed++
			} else {
				u.Pending++
			}
		}
	}
	return u, nil
}

func rangeKey(d *types.TableDescription) string {
	for _, k := range d.KeySchema {
		if k.KeyType == types.KeyTypeRange {
			return aws.ToString(k.AttributeName)
		}
	}
	return outbox.DefaultSortKey
}

// checkUndelivered refuses the deletion of an owned table that holds
// undelivered events, unless st.ForceDestroy.
func (c *Provisioner) checkUndelivered(ctx context.Context, st State) error {
	if !st.TableOwned || st.TableName == "" || st.ForceDestroy {
		return nil
	}
	u, err := c.CountUndelivered(ctx, st.TableName, nil)
	if err != nil {
		return fmt.Errorf("deleting outbox pipeline (%s): %w", st.Name, err)
	}
	if u.Total() > 0 {
		return &UndeliveredError{Pipeline: st.Name, Table: st.TableName, Undelivered: u}
	}
	return nil
}

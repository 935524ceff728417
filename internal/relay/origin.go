package relay

import (
	"cmp"
	"context"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// originFilter is the table as the reconciler of a multi-Region pipeline
// reads one Region's events: its queries and scans return only the events
// written in region (outbox.AttrOrigin), and for the primary Region, the
// first of the peers, the events without origin too, written before the
// writer stamped it. A run reads its own Region's events so, and those of
// each Region it has taken over (regions.go).
type originFilter struct {
	reconcile.ReadAPI
	region  string
	primary bool
}

// checkOwnRegion refuses a multi-Region pipeline's relay whose Region, the
// function's, is not one of the peers: it would publish no event at all.
func checkOwnRegion(cfg config.Config, region string) error {
	if len(cfg.Regions) == 0 {
		return nil
	}
	if problem, fix := validation.OwnRegion(cfg.Regions, region); problem != "" || region == "" {
		return fmt.Errorf("relay: %s %q %s: %s", config.EnvRegions, cfg.Regions, cmp.Or(problem, "is set, but the function's Region is unknown"), cmp.Or(fix, "set AWS_REGION"))
	}
	return nil
}

// Query queries with the origin condition added to in's filter.
func (f originFilter) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c := *in
	c.FilterExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues = f.filter(c.FilterExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues)
	return f.ReadAPI.Query(ctx, &c, opts...)
}

// Scan scans with the origin condition added to in's filter.
func (f originFilter) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c := *in
	c.FilterExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues = f.filter(c.FilterExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues)
	return f.ReadAPI.Scan(ctx, &c, opts...)
}

// filter is expr AND the origin condition, with its names and values
// added to copies of names and values.
func (f originFilter) filter(expr *string, names map[string]string, values map[string]types.AttributeValue) (*string, map[string]string, map[string]types.AttributeValue) {
	cond := "#outboxOriginRegion = :outboxOriginRegion"
	if f.primary {
		cond = "(attribute_not_exists(#outboxOriginRegion) OR " + cond + ")"
	}
	if e := aws.ToString(expr); e != "" {
		cond = "(" + e + ") AND " + cond
	}
	names, values = maps.Clone(names), maps.Clone(values)
	if names == nil {
		names = map[string]string{}
	}
	if values == nil {
		values = map[string]types.AttributeValue{}
	}
	names["#outboxOriginRegion"] = outbox.AttrOrigin
	values[":outboxOriginRegion"] = &types.AttributeValueMemberS{Value: f.region}
	return aws.String(cond), names, values
}

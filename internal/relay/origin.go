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
// reads it: its queries and scans return only the events of its own Region
// (outbox.AttrOrigin), and in the primary Region, the first of the peers,
// the events without origin too, written before the writer stamped it.
// The events of the other Regions are theirs to publish.
type originFilter struct {
	reconcile.ReadAPI
	region  string
	primary bool
}

// readAPI is what the reconciler reads the table with: the client itself
// for a single-Region pipeline, an originFilter for a multi-Region one.
// region is the function's Region, which must be one of the peers.
func readAPI(client reconcile.ReadAPI, cfg config.Config, region string) (reconcile.ReadAPI, error) {
	if len(cfg.Regions) == 0 {
		return client, nil
	}
	if problem, fix := validation.OwnRegion(cfg.Regions, region); problem != "" || region == "" {
		return nil, fmt.Errorf("relay: %s %q %s: %s", config.EnvRegions, cfg.Regions, cmp.Or(problem, "is set, but the function's Region is unknown"), cmp.Or(fix, "set AWS_REGION"))
	}
	return originFilter{ReadAPI: client, region: region, primary: cfg.Regions[0] == region}, nil
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

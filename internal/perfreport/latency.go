package perfreport

import (
	"context"
	"fmt"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
)

// CallLatency is the modelled latency of one AWS operation, as the relay
// sees it from a Lambda function in the same region: a log-normal draw with
// median P50 and 99th percentile P99, added by the local stack to each call.
type CallLatency struct {
	Service, Operation string
	P50, P99           time.Duration
	// Source is where the figures come from: a public source, or an
	// estimate said to be one.
	Source string
}

// dynamoDBSource is the public statement behind the DynamoDB figures.
const dynamoDBSource = "estimate within AWS's stated \"single-digit millisecond\" latency of DynamoDB requests in a Region (https://aws.amazon.com/dynamodb/); batch and transactional calls touch several items or partitions, so they are set higher"

// s3Source is the public statement behind the S3 figures, which are for
// objects of about 1 MiB (the claim check's); the model does not scale
// them with the size.
const s3Source = "estimate: AWS gives median latencies \"in the tens of milliseconds\" for requests under 512 KB and advises retrying one after 2 s (https://docs.aws.amazon.com/whitepapers/latest/s3-optimizing-performance-best-practices/timeouts-and-retries-for-latency-sensitive-applications.html); a 1 MiB body adds its transfer"

// AWSLatencyModel is the per-call latency model of the "AWS model"
// scenario: every call the relays, the writers and the consumer kit make on
// the measured path, the publish call of every target kind
// (BenchmarkTargetKinds) and the claim check's S3 calls
// (BenchmarkClaimCheck).
// No AWS document gives per-call percentiles; each figure is an estimate
// marked as such, chosen within what AWS states publicly.
var AWSLatencyModel = []CallLatency{
	{"dynamodb", "GetItem", 3 * time.Millisecond, 10 * time.Millisecond, dynamoDBSource},
	{"dynamodb", "BatchGetItem", 5 * time.Millisecond, 20 * time.Millisecond, dynamoDBSource},
	{"dynamodb", "PutItem", 5 * time.Millisecond, 15 * time.Millisecond, dynamoDBSource},
	{"dynamodb", "UpdateItem", 5 * time.Millisecond, 15 * time.Millisecond, dynamoDBSource},
	{"dynamodb", "DeleteItem", 5 * time.Millisecond, 15 * time.Millisecond, dynamoDBSource},
	{"dynamodb", "BatchWriteItem", 8 * time.Millisecond, 25 * time.Millisecond, dynamoDBSource},
	{"dynamodb", "TransactWriteItems", 10 * time.Millisecond, 30 * time.Millisecond, dynamoDBSource},
	{"dynamodb", "Query", 5 * time.Millisecond, 15 * time.Millisecond, dynamoDBSource},
	{"events", "PutEvents", 20 * time.Millisecond, 60 * time.Millisecond, "estimate: AWS publishes no PutEvents call latency; 20 ms is the figure the project measured the naive relay with, the tail a 3× estimate"},
	{"sns", "PublishBatch", 15 * time.Millisecond, 50 * time.Millisecond, "estimate: AWS publishes no Publish call latency"},
	{"sqs", "SendMessageBatch", 15 * time.Millisecond, 50 * time.Millisecond, "estimate: AWS publishes no SendMessage call latency; set as SNS's"},
	{"s3", "PutObject", 40 * time.Millisecond, 200 * time.Millisecond, s3Source},
	{"s3", "GetObject", 30 * time.Millisecond, 150 * time.Millisecond, s3Source},
	{"s3", "PutObjectTagging", 20 * time.Millisecond, 80 * time.Millisecond, s3Source},
	{"s3", "HeadObject", 15 * time.Millisecond, 60 * time.Millisecond, s3Source},
}

// ApplyLatencyModel adds the model's latencies to the stack through its
// fault API and returns a function that removes them. The consumer kit's
// benchmark (internal/consumertest) measures under it too.
func ApplyLatencyModel(ctx context.Context, ctl *control.Client, model []CallLatency) (func() error, error) {
	var ids []string
	remove := func() error {
		for _, id := range ids {
			if err := ctl.RemoveFault(context.WithoutCancel(ctx), id); err != nil {
				return fmt.Errorf("removing latency rule %s: %w", id, err)
			}
		}
		return nil
	}
	for _, c := range model {
		rule, err := ctl.AddFault(ctx, control.FaultRule{
			Service: c.Service, Operation: c.Operation,
			Latency: awsapi.Duration(c.P50), LatencyP99: awsapi.Duration(c.P99),
		})
		if err != nil {
			_ = remove()
			return nil, fmt.Errorf("adding the latency of %s %s: %w", c.Service, c.Operation, err)
		}
		ids = append(ids, rule.ID)
	}
	return remove, nil
}

package relay_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/claimsweep"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// sizeSink is a queue that receives what one kind publishes, and the
// relay's environment for that kind.
type sizeSink struct {
	url string
	env map[string]string
}

// sizeSinks makes, on the local stack of cfg, a queue for each kind: the
// SQS target itself, a rule's target on the default bus, and a topic's
// subscriber.
func sizeSinks(ctx context.Context, t *testing.T, cfg aws.Config) map[string]sizeSink {
	t.Helper()
	q := sqs.NewFromConfig(cfg)
	queue := func(name string, policy func(string) string) (string, string) {
		out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		arn := attrs.Attributes["QueueArn"]
		if policy != nil {
			if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: out.QueueUrl, Attributes: map[string]string{"Policy": policy(arn)}}); err != nil {
				t.Fatal(err)
			}
		}
		return aws.ToString(out.QueueUrl), arn
	}
	sinks := map[string]sizeSink{}
	url, arn := queue("sizes-sqs", nil)
	sinks[outbox.TargetSQS] = sizeSink{url, map[string]string{config.EnvTarget: "sqs", targetkind.EnvQueueARN: arn}}

	eb := eventbridge.NewFromConfig(cfg)
	rule, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("sizes"), EventPattern: aws.String(`{"source":["com.example.files"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	url, arn = queue("sizes-bus", acctest.QueuePolicy("events.amazonaws.com", aws.ToString(rule.RuleArn)))
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("sizes"), Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String(arn)}}}); err != nil {
		t.Fatal(err)
	}
	sinks[outbox.TargetEventBridge] = sizeSink{url, map[string]string{config.EnvTarget: "eventbridge"}}

	topics := sns.NewFromConfig(cfg)
	topic, err := topics.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("sizes")})
	if err != nil {
		t.Fatal(err)
	}
	url, arn = queue("sizes-topic", acctest.QueuePolicy("sns.amazonaws.com", aws.ToString(topic.TopicArn)))
	if _, err := topics.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	sinks[outbox.TargetSNS] = sizeSink{url, map[string]string{config.EnvTarget: "sns", config.EnvTopicARN: aws.ToString(topic.TopicArn)}}
	return sinks
}

// TestLargeEventsByKind: written with its target's limits and a claim
// check, an event of 300 KB goes inline through an SQS queue and an event
// bus (whose delivered event a queue takes whole) and is claim-checked
// for an SNS topic; one of 900 KB, over what a DynamoDB item holds, is
// claim-checked for every kind. Each arrives at its queue.
func TestLargeEventsByKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := outbox.Table{Name: "files-outbox", Layout: outbox.LayoutDedicated}.WithDefaults()
	cfg, objects, ddb := relaytest.ClaimCheckStack(ctx, t, "files-claims", table)
	sinks := sizeSinks(ctx, t, cfg)
	tests := []struct {
		kind   string
		size   int
		inline bool
	}{
		{outbox.TargetSQS, 300 * 1024, true},
		{outbox.TargetEventBridge, 300 * 1024, true},
		{outbox.TargetSNS, 300 * 1024, false},
		{outbox.TargetSQS, 900 * 1024, false},
		{outbox.TargetEventBridge, 900 * 1024, false},
		{outbox.TargetSNS, 900 * 1024, false},
	}
	for _, tt := range tests {
		// One after the other: the kinds share the table.
		sink := sinks[tt.kind]
		w, err := outbox.NewWriter(ddb, table, outbox.WithTarget(tt.kind), outbox.WithClaimCheck(objects, "files-claims"))
		if err != nil {
			t.Fatal(err)
		}
		blob := strings.Repeat(strconv.Itoa(tt.size%7), tt.size)
		rs, err := w.Write(ctx, nil, outbox.Event{Source: "com.example.files", DetailType: "FileStored", Detail: []byte(`{"blob":"` + blob + `"}`)})
		if err != nil {
			t.Fatalf("%s, %d bytes: %v", tt.kind, tt.size, err)
		}
		if inline := rs[0].DataRef == nil; inline != tt.inline {
			t.Errorf("%s, %d bytes: written inline = %v, want %v", tt.kind, tt.size, inline, tt.inline)
		}
		body := receiveBody(ctx, t, cfg, sink.url, func() { publishPending(ctx, t, cfg, ddb, objects, table, sink.env) })
		if got := strings.Contains(body, blob); got != tt.inline || (!tt.inline && !strings.Contains(body, rs[0].DataRef.Key)) {
			t.Errorf("%s, %d bytes: the message (%d bytes) carries the data = %v, want %v (else the reference)", tt.kind, tt.size, len(body), got, tt.inline)
		}
	}
}

// publishPending runs the reconciler of a relay publishing to env's kind,
// which publishes what is pending.
func publishPending(ctx context.Context, t *testing.T, cfg aws.Config, ddb relay.DynamoDBAPI, objects claimsweep.S3API, table outbox.Table, env map[string]string) {
	t.Helper()
	rc, err := config.FromEnv(func(k string) string {
		if k == config.EnvTableName {
			return table.Name
		}
		return env[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	rc.Table = table
	later := func() time.Time { return time.Now().Add(20 * time.Minute) }
	r, err := relay.New(rc, relay.Clients{DynamoDB: ddb, AWS: cfg, S3: objects}, relay.Options{Log: newLogger(io.Discard), Now: later})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Reconcile(ctx, relay.ReconcileRequest{Action: relay.ActionReconcile, MinAgeSeconds: aws.Float64(60)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || rep.Poison != 0 {
		t.Fatalf("reconcile: %+v", rep.Report)
	}
}

// receiveBody runs publish until one message arrives on url (bounded),
// and returns its body: the reconciler finds pending items through an
// eventually consistent index.
func receiveBody(ctx context.Context, t *testing.T, cfg aws.Config, url string, publish func()) string {
	t.Helper()
	q := sqs.NewFromConfig(cfg)
	for end := time.Now().Add(3 * time.Minute); time.Now().Before(end); {
		publish()
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) > 0 {
			_, _ = q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: out.Messages[0].ReceiptHandle})
			return aws.ToString(out.Messages[0].Body)
		}
	}
	t.Fatalf("nothing arrived at %s within 3 minutes", url)
	return ""
}

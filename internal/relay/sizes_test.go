package relay_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

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
// claim-checked for every kind, and published inline where it fits the
// kind's message: whole in the SQS queue and in the bus rule's queue, as
// a reference through the SNS topic. Each arrives at its queue.
func TestLargeEventsByKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := outbox.Table{Name: "files-outbox", Layout: outbox.LayoutDedicated}.WithDefaults()
	cfg, objects, ddb := relaytest.ClaimCheckStack(ctx, t, "files-claims", table)
	sinks := sizeSinks(ctx, t, cfg)
	tests := []struct {
		kind      string
		size      int
		inline    bool // written inline
		published bool // published inline
	}{
		{outbox.TargetSQS, 300 * 1024, true, true},
		{outbox.TargetEventBridge, 300 * 1024, true, true},
		{outbox.TargetSNS, 300 * 1024, false, false},
		{outbox.TargetSQS, 900 * 1024, false, true},
		{outbox.TargetEventBridge, 900 * 1024, false, true},
		{outbox.TargetSNS, 900 * 1024, false, false},
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
		got, ref := strings.Contains(body, blob), strings.Contains(body, "dataRef") // quoted inside an SNS notification
		if got != tt.published || ref == tt.published || (ref && !strings.Contains(body, rs[0].DataRef.Key)) {
			t.Errorf("%s, %d bytes: the message (%d bytes) carries the data = %v and a reference = %v, want the data = %v (else the reference)", tt.kind, tt.size, len(body), got, ref, tt.published)
		}
		if rs[0].DataRef != nil {
			tags, err := objects.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(rs[0].DataRef.Bucket), Key: aws.String(rs[0].DataRef.Key)})
			if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != outbox.ClaimStatePublished {
				t.Errorf("%s, %d bytes: the published event's object has the tags %+v (%v), want %s=%s", tt.kind, tt.size, tags, err, outbox.ClaimStateTag, outbox.ClaimStatePublished)
			}
		}
	}
}

// publishPending runs the reconciler of a relay publishing to env's kind,
// which publishes what is pending.
func publishPending(ctx context.Context, t *testing.T, cfg aws.Config, ddb relay.DynamoDBAPI, objects claimsweep.S3API, table outbox.Table, env map[string]string) {
	t.Helper()
	if rep := reconcileKind(ctx, t, cfg, ddb, objects, table, env); rep.Failed != 0 || rep.Poison != 0 {
		t.Fatalf("reconcile: %+v", rep.Report)
	}
}

// reconcileKind runs the reconciler of a relay publishing to env's kind,
// with objects its S3 client, and returns its report.
func reconcileKind(ctx context.Context, t *testing.T, cfg aws.Config, ddb relay.DynamoDBAPI, objects claimsweep.S3API, table outbox.Table, env map[string]string) relay.ReconcileReport {
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
	return rep
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

// unreadableObjects is an S3 client whose every GetObject is denied, as
// for a relay role without s3:GetObject or the bucket's KMS key.
type unreadableObjects struct{ *s3.Client }

func (unreadableObjects) GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "AccessDenied", Message: "not authorized to perform: s3:GetObject"}
}

// TestUnreadableClaimStaysPending: a claim-checked event whose object the
// relay may not read, though it would fit the queue inline, is not
// published: the run counts it failed and it stays PENDING, then goes
// inline once the object can be read.
func TestUnreadableClaimStaysPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := outbox.Table{Name: "files-outbox", Layout: outbox.LayoutDedicated}.WithDefaults()
	cfg, objects, ddb := relaytest.ClaimCheckStack(ctx, t, "files-claims", table)
	sink := sizeSinks(ctx, t, cfg)[outbox.TargetSQS]
	w, err := outbox.NewWriter(ddb, table, outbox.WithTarget(outbox.TargetSQS), outbox.WithClaimCheck(objects, "files-claims"))
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.Repeat("4", 900*1024)
	rs, err := w.Write(ctx, nil, outbox.Event{Source: "com.example.files", DetailType: "FileStored", Detail: []byte(`{"blob":"` + blob + `"}`)})
	if err != nil || rs[0].DataRef == nil {
		t.Fatalf("written %+v, %v; want a claim-checked event", rs, err)
	}
	for end := time.Now().Add(3 * time.Minute); ; {
		rep := reconcileKind(ctx, t, cfg, ddb, unreadableObjects{objects}, table, sink.env)
		if rep.Failed == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no run failed the unreadable event within 3 minutes: %+v", rep.Report)
		}
	}
	got, err := ddb.BatchGetItem(ctx, table.CurrentItems(rs))
	if err != nil || len(got.Responses[table.Name]) != 1 {
		t.Fatalf("reading the item: %v, %+v", err, got)
	}
	if s, _ := got.Responses[table.Name][0][outbox.AttrStatus].(*ddbtypes.AttributeValueMemberS); s == nil || s.Value != string(outbox.StatusPending) {
		t.Errorf("the unreadable event's status is %v, want %s", got.Responses[table.Name][0][outbox.AttrStatus], outbox.StatusPending)
	}
	out, err := sqs.NewFromConfig(cfg).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(sink.url)})
	if err != nil || len(out.Messages) != 0 {
		t.Fatalf("the queue holds %d messages (%v), want none", len(out.Messages), err)
	}
	body := receiveBody(ctx, t, cfg, sink.url, func() { publishPending(ctx, t, cfg, ddb, objects, table, sink.env) })
	if !strings.Contains(body, blob) || strings.Contains(body, "dataRef") {
		t.Errorf("once readable, the event (%d bytes) was not published inline", len(body))
	}
}

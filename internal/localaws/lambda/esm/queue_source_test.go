package esm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awscloudwatch "github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/cloudwatch"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

// sqsFunction is one function reading SQS events; its handler returns the
// response and a function error ("" for none).
type sqsFunction struct {
	mu      sync.Mutex
	timeout int
	events  []events.SQSEvent
	handler func(ev events.SQSEvent) (out []byte, functionError string)
}

func (f *sqsFunction) FunctionInfo(name string) (string, string, string, bool) {
	if name != fnName && name != fnArn {
		return "", "", "", false
	}
	return fnArn, roleArn, "Active", true
}

func (f *sqsFunction) InvokeSync(_ context.Context, function string, payload []byte) ([]byte, string, error) {
	if function != fnArn {
		return nil, "", awsapi.NotFound404("Function not found: %s", function)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, "", err
	}
	f.mu.Lock()
	f.events = append(f.events, ev)
	h := f.handler
	f.mu.Unlock()
	if h == nil {
		return []byte("null"), "", nil
	}
	out, fnErr := h(ev)
	return out, fnErr, nil
}

// FunctionTimeout is the function's timeout (1 second, Lambda's least,
// unless set), which the queues' visibility timeouts may not be under.
func (f *sqsFunction) FunctionTimeout(string) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timeout == 0 {
		return 1, true
	}
	return f.timeout, true
}

// received lists the messages delivered so far, in order.
func (f *sqsFunction) received() []events.SQSMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []events.SQSMessage
	for _, ev := range f.events {
		out = append(out, ev.Records...)
	}
	return out
}

func (f *sqsFunction) batches() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]int, len(f.events))
	for i, ev := range f.events {
		out[i] = len(ev.Records)
	}
	return out
}

// bodies lists the bodies of messages delivered.
func bodies(msgs []events.SQSMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Body
	}
	return out
}

// queueFixture is a mapping service, an SQS service and a function.
type queueFixture struct {
	*fixture
	fn  *sqsFunction
	sqs *awssqs.Client
	cw  *awscloudwatch.Client
}

func newQueueFixture(t *testing.T, pollers int) *queueFixture {
	t.Helper()
	f := &fixture{fns: &fakeFunctions{exists: true}, queues: &fakeQueues{}, auth: &denyAuthorizer{deny: map[string]bool{}}, pollers: pollers}
	f.env = awsapi.NewEnv("", "", nil)
	f.env.SetAuthorizer(f.auth)
	f.sqs = sqs.New(f.env)
	f.metrics = cloudwatch.New(f.env)
	fn := &sqsFunction{}
	f.functions = fn
	cfg := f.serve(t, func() (esm.Streams, error) { return f.stream, nil }, f.sqs, f.metrics)
	t.Cleanup(func() { _ = f.sqs.Close() })
	f.client = lambda.NewFromConfig(cfg)
	return &queueFixture{fixture: f, fn: fn, sqs: awssqs.NewFromConfig(cfg), cw: awscloudwatch.NewFromConfig(cfg)}
}

// queue creates a queue with attributes and returns its URL and ARN.
func (q *queueFixture) queue(t *testing.T, name string, attrs map[string]string) (string, string) {
	t.Helper()
	ctx := context.Background()
	out, err := q.sqs.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	a, err := q.sqs.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl), a.Attributes["QueueArn"]
}

func (q *queueFixture) send(t *testing.T, url, group string, bodies ...string) {
	t.Helper()
	for i, b := range bodies {
		in := &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(b)}
		if group != "" {
			in.MessageGroupId = aws.String(group)
			in.MessageDeduplicationId = aws.String(fmt.Sprintf("%s-%d-%s", group, i, b))
		}
		if _, err := q.sqs.SendMessage(context.Background(), in); err != nil {
			t.Fatalf("SendMessage %s: %v", b, err)
		}
	}
}

// mapQueue creates a mapping of the queue and waits until it is Enabled.
func (q *queueFixture) mapQueue(t *testing.T, arn string, in *lambda.CreateEventSourceMappingInput) string {
	t.Helper()
	in.EventSourceArn = aws.String(arn)
	in.FunctionName = aws.String(fnName)
	out, err := q.client.CreateEventSourceMapping(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateEventSourceMapping: %v", err)
	}
	id := aws.ToString(out.UUID)
	q.waitState(t, id, "Enabled")
	return id
}

// visibleCount is the queue's ApproximateNumberOfMessages plus
// ApproximateNumberOfMessagesNotVisible.
func (q *queueFixture) count(t *testing.T, url string) int {
	t.Helper()
	a, err := q.sqs.GetQueueAttributes(context.Background(), &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(a.Attributes["ApproximateNumberOfMessages"])
	m, _ := strconv.Atoi(a.Attributes["ApproximateNumberOfMessagesNotVisible"])
	return n + m
}

func reportFailures(ids ...string) []byte {
	type item struct {
		ItemIdentifier string `json:"itemIdentifier"`
	}
	resp := struct {
		BatchItemFailures []item `json:"batchItemFailures"`
	}{BatchItemFailures: []item{}}
	for _, id := range ids {
		resp.BatchItemFailures = append(resp.BatchItemFailures, item{id})
	}
	b, _ := json.Marshal(resp)
	return b
}

const queueWait = 20 * time.Second

// TestQueuePartialBatchFailure checks that with ReportBatchItemFailures
// the messages the function reports come back after the visibility timeout
// and only they, the others being deleted; and that the SQS event carries
// Lambda's fields.
func TestQueuePartialBatchFailure(t *testing.T) {
	t.Parallel()
	q := newQueueFixture(t, 1)
	url, arn := q.queue(t, "orders", map[string]string{"VisibilityTimeout": "1"})
	q.fn.handler = func(ev events.SQSEvent) ([]byte, string) {
		var failed []string
		for _, m := range ev.Records {
			if m.Body == "b" && m.Attributes["ApproximateReceiveCount"] == "1" {
				failed = append(failed, m.MessageId)
			}
		}
		return reportFailures(failed...), ""
	}
	q.send(t, url, "", "a", "b", "c")
	q.mapQueue(t, arn, &lambda.CreateEventSourceMappingInput{FunctionResponseTypes: []lambdatypes.FunctionResponseType{"ReportBatchItemFailures"}})
	eventually(t, queueWait, func() bool { return q.count(t, url) == 0 }, func() string {
		return fmt.Sprintf("%d messages left; delivered %v", q.count(t, url), bodies(q.fn.received()))
	})
	got := bodies(q.fn.received())
	slices.Sort(got)
	if want := []string{"a", "b", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v (only the failed message again)", got, want)
	}
	for _, m := range q.fn.received() {
		if m.EventSource != "aws:sqs" || m.EventSourceARN != arn || m.AWSRegion != "us-east-1" || m.Md5OfBody == "" || m.ReceiptHandle == "" {
			t.Errorf("record %+v lacks Lambda's fields", m)
		}
		for _, a := range []string{"ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp"} {
			if m.Attributes[a] == "" {
				t.Errorf("record %s has no attribute %s: %v", m.Body, a, m.Attributes)
			}
		}
	}
}

// TestQueueInvalidBatchResponseFailsTheBatch checks that an identifier not
// of the batch fails the whole batch: every message comes back.
func TestQueueInvalidBatchResponseFailsTheBatch(t *testing.T) {
	t.Parallel()
	q := newQueueFixture(t, 1)
	url, arn := q.queue(t, "orders", map[string]string{"VisibilityTimeout": "1"})
	q.fn.handler = func(ev events.SQSEvent) ([]byte, string) {
		if ev.Records[0].Attributes["ApproximateReceiveCount"] == "1" {
			return reportFailures("not-a-message-of-the-batch"), ""
		}
		return []byte(`{"batchItemFailures":[]}`), ""
	}
	q.send(t, url, "", "a", "b")
	q.mapQueue(t, arn, &lambda.CreateEventSourceMappingInput{FunctionResponseTypes: []lambdatypes.FunctionResponseType{"ReportBatchItemFailures"}})
	eventually(t, queueWait, func() bool { return q.count(t, url) == 0 }, func() string {
		return fmt.Sprintf("%d messages left; delivered %v", q.count(t, url), bodies(q.fn.received()))
	})
	got := bodies(q.fn.received())
	slices.Sort(got)
	if want := []string{"a", "a", "b", "b"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %v, want %v (the whole batch again)", got, want)
	}
}

// TestQueueFIFOGroupHeldWhileFailed checks that a FIFO group's later
// messages wait while an earlier one is in flight or failed, that other
// groups go on, and that the records carry the FIFO attributes.
func TestQueueFIFOGroupHeldWhileFailed(t *testing.T) {
	t.Parallel()
	q := newQueueFixture(t, 0)
	url, arn := q.queue(t, "orders.fifo", map[string]string{"FifoQueue": "true", "VisibilityTimeout": "1"})
	q.fn.handler = func(ev events.SQSEvent) ([]byte, string) {
		for _, m := range ev.Records {
			if m.Body == "g1-1" && m.Attributes["ApproximateReceiveCount"] == "1" {
				return nil, "Unhandled"
			}
		}
		return nil, ""
	}
	q.send(t, url, "g1", "g1-1", "g1-2", "g1-3")
	q.send(t, url, "g2", "g2-1")
	q.mapQueue(t, arn, &lambda.CreateEventSourceMappingInput{BatchSize: aws.Int32(1)})
	eventually(t, queueWait, func() bool { return q.count(t, url) == 0 }, func() string {
		return fmt.Sprintf("%d messages left; delivered %v", q.count(t, url), bodies(q.fn.received()))
	})
	var g1 []string
	for _, m := range q.fn.received() {
		if m.Attributes["MessageGroupId"] == "" || m.Attributes["SequenceNumber"] == "" || m.Attributes["MessageDeduplicationId"] == "" {
			t.Errorf("FIFO record %s lacks MessageGroupId, SequenceNumber or MessageDeduplicationId: %v", m.Body, m.Attributes)
		}
		if strings.HasPrefix(m.Body, "g1") {
			g1 = append(g1, m.Body)
		}
	}
	if want := []string{"g1-1", "g1-1", "g1-2", "g1-3"}; !slices.Equal(g1, want) {
		t.Fatalf("group g1 delivered %v, want %v", g1, want)
	}
	if !slices.Contains(bodies(q.fn.received()), "g2-1") {
		t.Fatal("group g2 was not delivered")
	}
}

// TestQueueRedriveToDeadLetterQueue checks that the queue's redrive policy,
// not Lambda, dead-letters a message the function keeps failing, after
// maxReceiveCount deliveries.
func TestQueueRedriveToDeadLetterQueue(t *testing.T) {
	t.Parallel()
	q := newQueueFixture(t, 1)
	dlqURL, dlqArn := q.queue(t, "orders-dlq", nil)
	url, arn := q.queue(t, "orders", map[string]string{"VisibilityTimeout": "1",
		"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":2}`, dlqArn)})
	q.fn.handler = func(events.SQSEvent) ([]byte, string) { return nil, "Unhandled" }
	q.send(t, url, "", "poison")
	q.mapQueue(t, arn, &lambda.CreateEventSourceMappingInput{})
	eventually(t, queueWait, func() bool { return q.count(t, dlqURL) == 1 }, func() string {
		return fmt.Sprintf("dead-letter queue holds %d; delivered %v", q.count(t, dlqURL), bodies(q.fn.received()))
	})
	if n := q.count(t, url); n != 0 {
		t.Errorf("source queue still holds %d messages", n)
	}
	if got := bodies(q.fn.received()); len(got) != 2 {
		t.Fatalf("delivered %v, want the message twice (maxReceiveCount 2)", got)
	}
}

// TestQueueBatchingWindow checks that a batching window gathers messages
// that arrive after the first into one batch, beyond the 10 a receive
// returns, and that without one a batch is what one receive returns.
func TestQueueBatchingWindow(t *testing.T) {
	t.Parallel()
	q := newQueueFixture(t, 1)
	url, arn := q.queue(t, "orders", nil)
	id := q.mapQueue(t, arn, &lambda.CreateEventSourceMappingInput{BatchSize: aws.Int32(20), MaximumBatchingWindowInSeconds: aws.Int32(2)})
	q.send(t, url, "", "first")
	eventually(t, queueWait, func() bool { return q.status(t, id).Counters.RecordsRead >= 1 }, func() string { return "the first message was not received" })
	var later []string
	for i := range 14 {
		later = append(later, fmt.Sprintf("m%d", i))
	}
	q.send(t, url, "", later...)
	eventually(t, queueWait, func() bool { return q.count(t, url) == 0 }, func() string {
		return fmt.Sprintf("%d messages left; batches %v", q.count(t, url), q.fn.batches())
	})
	if got := q.fn.batches(); !slices.Equal(got, []int{15}) {
		t.Fatalf("batches %v, want one batch of 15 gathered in the window", got)
	}
}

// TestQueueMappingValidation checks the SQS rules of Create and Update.
func TestQueueMappingValidation(t *testing.T) {
	t.Parallel()
	q := newQueueFixture(t, 1)
	_, arn := q.queue(t, "orders", nil)
	_, fifoArn := q.queue(t, "orders.fifo", map[string]string{"FifoQueue": "true"})
	for _, c := range []struct {
		name string
		in   lambda.CreateEventSourceMappingInput
		want string
	}{
		{"batch over 10 without a window", lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, BatchSize: aws.Int32(11)}, "MaximumBatchingWindowInSeconds"},
		{"FIFO batch over 10", lambda.CreateEventSourceMappingInput{EventSourceArn: &fifoArn, BatchSize: aws.Int32(11), MaximumBatchingWindowInSeconds: aws.Int32(1)}, "FIFO"},
		{"FIFO window", lambda.CreateEventSourceMappingInput{EventSourceArn: &fifoArn, MaximumBatchingWindowInSeconds: aws.Int32(1)}, "FIFO"},
		{"maximum concurrency 1", lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, ScalingConfig: &lambdatypes.ScalingConfig{MaximumConcurrency: aws.Int32(1)}}, "scalingConfig.maximumConcurrency"},
		{"stream setting", lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, ParallelizationFactor: aws.Int32(2)}, "ParallelizationFactor"},
		{"starting position", lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, StartingPosition: "LATEST"}, "StartingPosition"},
		{"unknown metric", lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, MetricsConfig: &lambdatypes.EventSourceMappingMetricsConfig{Metrics: []lambdatypes.EventSourceMappingMetric{"Nope"}}}, "metricsConfig.metrics"},
		{"Kafka metric", lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, MetricsConfig: &lambdatypes.EventSourceMappingMetricsConfig{Metrics: []lambdatypes.EventSourceMappingMetric{"ErrorCount"}}}, "Kafka"},
		{"missing queue", lambda.CreateEventSourceMappingInput{EventSourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:nope")}, "NonExistentQueue"},
	} {
		in := c.in
		in.FunctionName = aws.String(fnName)
		_, err := q.client.CreateEventSourceMapping(context.Background(), &in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.want)
		}
	}
	q.fn.mu.Lock()
	q.fn.timeout = 31
	q.fn.mu.Unlock()
	if _, err := q.client.CreateEventSourceMapping(context.Background(), &lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, FunctionName: aws.String(fnName)}); err == nil ||
		!strings.Contains(err.Error(), "Queue visibility timeout: 30 seconds is less than Function timeout: 31 seconds") {
		t.Errorf("a function timeout over the queue's visibility timeout: error %v", err)
	}
	q.fn.mu.Lock()
	q.fn.timeout = 0
	q.fn.mu.Unlock()
	q.auth.mu.Lock()
	q.auth.deny["sqs:ReceiveMessage"] = true
	q.auth.mu.Unlock()
	_, err := q.client.CreateEventSourceMapping(context.Background(), &lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, FunctionName: aws.String(fnName)})
	if err == nil || !strings.Contains(err.Error(), "ReceiveMessage") {
		t.Errorf("a role without sqs:ReceiveMessage: error %v", err)
	}
}

// TestMetricsConfigRoundTrip checks that MetricsConfig and ScalingConfig
// come back from Create, Get, Update and List, for a queue and a stream
// mapping, and that a queue mapping has no stream settings.
func TestMetricsConfigRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := newQueueFixture(t, 1)
	_, arn := q.queue(t, "orders", nil)
	eventCount := &lambdatypes.EventSourceMappingMetricsConfig{Metrics: []lambdatypes.EventSourceMappingMetric{"EventCount"}}
	out, err := q.client.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{EventSourceArn: &arn, FunctionName: aws.String(fnName),
		MetricsConfig: eventCount, ScalingConfig: &lambdatypes.ScalingConfig{MaximumConcurrency: aws.Int32(3)}})
	if err != nil {
		t.Fatal(err)
	}
	if out.MetricsConfig == nil || !slices.Equal(out.MetricsConfig.Metrics, eventCount.Metrics) {
		t.Errorf("Create MetricsConfig %+v", out.MetricsConfig)
	}
	if out.ScalingConfig == nil || aws.ToInt32(out.ScalingConfig.MaximumConcurrency) != 3 || aws.ToInt32(out.BatchSize) != 10 {
		t.Errorf("Create ScalingConfig %+v, BatchSize %d", out.ScalingConfig, aws.ToInt32(out.BatchSize))
	}
	if out.ParallelizationFactor != nil || out.StartingPosition != "" || out.MaximumRetryAttempts != nil || out.DestinationConfig != nil {
		t.Errorf("a queue mapping has stream settings: %+v", out)
	}
	id := aws.ToString(out.UUID)
	q.waitState(t, id, "Enabled")
	if _, err := q.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: &id,
		MetricsConfig: &lambdatypes.EventSourceMappingMetricsConfig{Metrics: []lambdatypes.EventSourceMappingMetric{}}}); err != nil {
		t.Fatal(err)
	}
	got, err := q.client.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: &id})
	if err != nil {
		t.Fatal(err)
	}
	if got.MetricsConfig == nil || len(got.MetricsConfig.Metrics) != 0 {
		t.Errorf("after Update to []: MetricsConfig %+v", got.MetricsConfig)
	}
	q.waitState(t, id, "Enabled")
	if _, err := q.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: &id, MetricsConfig: eventCount}); err != nil {
		t.Fatal(err)
	}
	list, err := q.client.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{EventSourceArn: &arn})
	if err != nil || len(list.EventSourceMappings) != 1 {
		t.Fatalf("List: %v, %v", list, err)
	}
	if mc := list.EventSourceMappings[0].MetricsConfig; mc == nil || !slices.Equal(mc.Metrics, eventCount.Metrics) {
		t.Errorf("List MetricsConfig %+v", mc)
	}
	f := newFixture(t)
	sid := f.create(t, &lambda.CreateEventSourceMappingInput{MetricsConfig: eventCount})
	sget, err := f.client.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: &sid})
	if err != nil {
		t.Fatal(err)
	}
	if sget.MetricsConfig == nil || !slices.Equal(sget.MetricsConfig.Metrics, eventCount.Metrics) || sget.ParallelizationFactor == nil {
		t.Errorf("stream mapping: MetricsConfig %+v, ParallelizationFactor %v", sget.MetricsConfig, sget.ParallelizationFactor)
	}
}

// sum reads back the Sum of a mapping's metric from CloudWatch over the
// last hour; -1 when it has no datapoint.
func (q *queueFixture) sum(t *testing.T, uuid, metric string) float64 {
	t.Helper()
	now := time.Now()
	out, err := q.cw.GetMetricStatistics(context.Background(), &awscloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String("AWS/Lambda"), MetricName: aws.String(metric),
		Dimensions: []cwtypes.Dimension{{Name: aws.String("EventSourceMappingUUID"), Value: aws.String(uuid)}},
		StartTime:  aws.Time(now.Add(-time.Hour)), EndTime: aws.Time(now.Add(time.Minute)), Period: aws.Int32(3600 + 60),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticSum},
	})
	if err != nil {
		t.Fatalf("GetMetricStatistics %s: %v", metric, err)
	}
	if len(out.Datapoints) == 0 {
		return -1
	}
	total := 0.0
	for _, p := range out.Datapoints {
		total += aws.ToFloat64(p.Sum)
	}
	return total
}

// TestQueueMetricsEventCount checks that a mapping with MetricsConfig
// EventCount publishes its event counts to CloudWatch (AWS/Lambda, by
// EventSourceMappingUUID), where they are read back, and that one without
// it publishes none.
func TestQueueMetricsEventCount(t *testing.T) {
	t.Parallel()
	q := newQueueFixture(t, 1)
	url, arn := q.queue(t, "orders", map[string]string{"VisibilityTimeout": "1"})
	q.fn.handler = func(ev events.SQSEvent) ([]byte, string) {
		var failed []string
		for _, m := range ev.Records {
			if m.Body == `{"n":2}` && m.Attributes["ApproximateReceiveCount"] == "1" {
				failed = append(failed, m.MessageId)
			}
		}
		return reportFailures(failed...), ""
	}
	q.send(t, url, "", `{"n":1}`, `{"n":2}`, `{"n":3}`, `{"skip":true}`)
	id := q.mapQueue(t, arn, &lambda.CreateEventSourceMappingInput{
		FunctionResponseTypes: []lambdatypes.FunctionResponseType{"ReportBatchItemFailures"},
		FilterCriteria:        &lambdatypes.FilterCriteria{Filters: []lambdatypes.Filter{{Pattern: aws.String(`{"body":{"n":[{"exists":true}]}}`)}}},
		MetricsConfig:         &lambdatypes.EventSourceMappingMetricsConfig{Metrics: []lambdatypes.EventSourceMappingMetric{"EventCount"}},
	})
	eventually(t, queueWait, func() bool { return q.count(t, url) == 0 }, func() string {
		return fmt.Sprintf("%d messages left; delivered %v", q.count(t, url), bodies(q.fn.received()))
	})
	want := map[string]float64{
		"PolledEventCount":       5, // four, and the failed one again
		"FilteredOutEventCount":  1,
		"InvokedEventCount":      4,
		"FailedInvokeEventCount": 1,
		"DeletedEventCount":      3,
	}
	for metric, n := range want {
		eventually(t, queueWait, func() bool { return q.sum(t, id, metric) == n }, func() string {
			return fmt.Sprintf("%s sums to %v, want %v", metric, q.sum(t, id, metric), n)
		})
	}

	_, other := q.queue(t, "quiet", nil)
	quiet := q.mapQueue(t, other, &lambda.CreateEventSourceMappingInput{})
	qurl, _ := q.sqs.GetQueueUrl(context.Background(), &awssqs.GetQueueUrlInput{QueueName: aws.String("quiet")})
	q.send(t, aws.ToString(qurl.QueueUrl), "", "x")
	eventually(t, queueWait, func() bool { return q.count(t, aws.ToString(qurl.QueueUrl)) == 0 }, func() string { return "the quiet queue was not drained" })
	if got := q.sum(t, quiet, "PolledEventCount"); got != -1 {
		t.Errorf("a mapping without MetricsConfig published PolledEventCount %v", got)
	}
}

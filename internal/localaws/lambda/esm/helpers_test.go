package esm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/cloudwatch"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/eventpattern"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

const (
	streamArn = "arn:aws:dynamodb:us-east-1:000000000000:table/orders/stream/2026-01-01T00:00:00.000"
	queueArn  = "arn:aws:sqs:us-east-1:000000000000:dlq"
	roleArn   = "arn:aws:iam::000000000000:role/relay"
	fnName    = "relay"
	fnArn     = "arn:aws:lambda:us-east-1:000000000000:function:relay"
)

// fakeStream is a one-shard stream with trimming.
type fakeStream struct {
	mu      sync.Mutex
	recs    []esm.StreamRecord
	next    int
	trimmed int // records before this index are trimmed
	reads   int
}

func (f *fakeStream) StreamExists(arn string) bool { return arn == streamArn }

func (f *fakeStream) Shards(arn string) ([]esm.Shard, error) {
	if arn != streamArn {
		return nil, errors.New("no stream")
	}
	return []esm.Shard{{ID: "shardId-00000001"}}, nil
}

func (f *fakeStream) LatestSequenceNumber(string, string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.recs) == 0 {
		return "", nil
	}
	return f.recs[len(f.recs)-1].SequenceNumber, nil
}

func (f *fakeStream) Records(_, _ string, after string, limit int) ([]esm.StreamRecord, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	start := f.trimmed
	trimmed := false
	if after != "" {
		i := 0
		for i < len(f.recs) && f.recs[i].SequenceNumber <= after {
			i++
		}
		if i < f.trimmed {
			trimmed = true
		} else {
			start = i
		}
	}
	end := min(start+limit, len(f.recs))
	return append([]esm.StreamRecord(nil), f.recs[start:end]...), trimmed, nil
}

// put appends an INSERT of item pk/sk and returns its sequence number.
func (f *fakeStream) put(pk, sk string, at time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	seq := fmt.Sprintf("%021d", 100+f.next)
	keys := fmt.Sprintf(`{"PK":{"S":%q},"SK":{"S":%q}}`, pk, sk)
	f.recs = append(f.recs, esm.StreamRecord{
		EventID:                     fmt.Sprintf("ev%d", f.next),
		EventName:                   "INSERT",
		SequenceNumber:              seq,
		ApproximateCreationDateTime: at,
		Keys:                        json.RawMessage(keys),
		NewImage:                    json.RawMessage(fmt.Sprintf(`{"PK":{"S":%q},"SK":{"S":%q},"n":{"N":"%d"}}`, pk, sk, f.next)),
		SizeBytes:                   40,
		StreamViewType:              "NEW_AND_OLD_IMAGES",
		PartitionKey:                pk,
	})
	return seq
}

func (f *fakeStream) trimAll() {
	f.mu.Lock()
	f.trimmed = len(f.recs)
	f.mu.Unlock()
}

// invocation is one call of the fake function.
type invocation struct {
	event events.DynamoDBEvent
	raw   []byte
}

func (i invocation) seqs() []string {
	out := make([]string, len(i.event.Records))
	for k, r := range i.event.Records {
		out[k] = r.Change.SequenceNumber
	}
	return out
}

// fakeFunctions is one function whose handler the test sets.
type fakeFunctions struct {
	mu      sync.Mutex
	exists  bool
	calls   []invocation
	handler func(ev events.DynamoDBEvent) (out []byte, functionError string, err error)
}

func (f *fakeFunctions) FunctionInfo(name string) (string, string, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.exists || (name != fnName && name != fnArn) {
		return "", "", "", false
	}
	return fnArn, roleArn, "Active", true
}

func (f *fakeFunctions) InvokeSync(_ context.Context, function string, payload []byte) ([]byte, string, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, "", err
	}
	f.mu.Lock()
	if !f.exists || function != fnArn {
		f.mu.Unlock()
		return nil, "", awsapi.NotFound404("Function not found: %s", function)
	}
	f.calls = append(f.calls, invocation{event: ev, raw: payload})
	h := f.handler
	f.mu.Unlock()
	if h == nil {
		return []byte("null"), "", nil
	}
	return h(ev)
}

func (f *fakeFunctions) setHandler(h func(ev events.DynamoDBEvent) ([]byte, string, error)) {
	f.mu.Lock()
	f.handler = h
	f.mu.Unlock()
}

func (f *fakeFunctions) setExists(v bool) {
	f.mu.Lock()
	f.exists = v
	f.mu.Unlock()
}

func (f *fakeFunctions) invocations() []invocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]invocation(nil), f.calls...)
}

// delivered lists the sequence numbers delivered so far, in order.
func (f *fakeFunctions) delivered() []string {
	var out []string
	for _, c := range f.invocations() {
		out = append(out, c.seqs()...)
	}
	return out
}

type fakeQueues struct {
	mu   sync.Mutex
	msgs []string
}

func (q *fakeQueues) Deliver(arn, body string, _ map[string]string) (string, error) {
	if arn != queueArn {
		return "", errors.New("no queue " + arn)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.msgs = append(q.msgs, body)
	return fmt.Sprintf("m%d", len(q.msgs)), nil
}

// AuthorizeSender allows every sender: the fake queues have no keys.
func (q *fakeQueues) AuthorizeSender(awsapi.Principal, string) error { return nil }

func (q *fakeQueues) messages() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.msgs...)
}

// denyAuthorizer denies listed actions for the role.
type denyAuthorizer struct {
	mu   sync.Mutex
	deny map[string]bool
}

func (a *denyAuthorizer) Authorize(p awsapi.Principal, action, _ string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.RoleArn == roleArn && a.deny[action] {
		return errors.New("denied")
	}
	return nil
}

type fixture struct {
	svc    *esm.Service
	stream *fakeStream
	fns    *fakeFunctions
	queues *fakeQueues
	auth   *denyAuthorizer
	client *lambda.Client
	env    *awsapi.Env
	// queue fixtures: the SQS service, the function that reads SQS events
	// and how many pollers a queue mapping runs.
	sqs       *sqs.Service
	functions esm.Functions
	pollers   int
	// metrics receives the mappings' metrics when set.
	metrics *cloudwatch.Service
}

const testInterval = 10 * time.Millisecond

// testTransition is how long the fixture's transient states last.
const testTransition = 20 * time.Millisecond

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{
		stream: &fakeStream{},
		fns:    &fakeFunctions{exists: true},
		queues: &fakeQueues{},
		auth:   &denyAuthorizer{deny: map[string]bool{}},
	}
	f.env = awsapi.NewEnv("", "", nil)
	f.env.SetAuthorizer(f.auth)
	f.client = lambda.NewFromConfig(f.serve(t, func() (esm.Streams, error) { return f.stream, nil }))
	return f
}

// serve starts the mapping service, reading streams, behind a router with
// the services also, and returns the configuration of a client of the
// router. The service is closed when t ends.
func (f *fixture) serve(t testing.TB, streams func() (esm.Streams, error), also ...awsapi.Service) aws.Config {
	t.Helper()
	f.svc = esm.New(esm.Config{
		Env:     f.env,
		Streams: streams,
		Functions: func() (esm.Functions, error) {
			if f.functions != nil {
				return f.functions, nil
			}
			return f.fns, nil
		},
		Messages: func() (esm.QueueMessages, error) {
			if f.sqs == nil {
				return nil, errors.New("no sqs service")
			}
			return f.sqs, nil
		},
		QueuePollers: f.pollers,
		Metrics: func() esm.MetricSink {
			if f.metrics == nil {
				return nil
			}
			return f.metrics
		},
		Queues:       func() (esm.Queues, error) { return f.queues, nil },
		Compile:      func(p string) (esm.Matcher, error) { return eventpattern.Compile(p) },
		PollInterval: testInterval,
		Transition:   testTransition,
	})
	router := awsapi.NewRouter(f.env)
	for _, s := range append(also, f.svc) {
		if err := router.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(router)
	t.Cleanup(func() {
		srv.Close()
		if err := f.svc.Close(); err != nil {
			t.Error(err)
		}
	})
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDADMIN", "secret", ""),
		BaseEndpoint: aws.String(srv.URL),
	}
}

// create creates a mapping and waits until it is Enabled (or Disabled).
func (f *fixture) create(t testing.TB, in *lambda.CreateEventSourceMappingInput) string {
	t.Helper()
	if in.EventSourceArn == nil {
		in.EventSourceArn = aws.String(streamArn)
	}
	if in.FunctionName == nil {
		in.FunctionName = aws.String(fnName)
	}
	if in.StartingPosition == "" {
		in.StartingPosition = "TRIM_HORIZON"
	}
	out, err := f.client.CreateEventSourceMapping(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateEventSourceMapping: %v", err)
	}
	id := aws.ToString(out.UUID)
	f.waitState(t, id, "Enabled", "Disabled")
	return id
}

func (f *fixture) waitState(t testing.TB, id string, states ...string) string {
	t.Helper()
	var last string
	eventually(t, 10*time.Second, func() bool {
		out, err := f.client.GetEventSourceMapping(context.Background(), &lambda.GetEventSourceMappingInput{UUID: aws.String(id)})
		if err != nil {
			last = err.Error()
			return false
		}
		last = aws.ToString(out.State)
		for _, s := range states {
			if last == s {
				return true
			}
		}
		return false
	}, func() string { return "mapping state " + last + ", want " + strings.Join(states, " or ") })
	return last
}

// eventually polls cond until it holds or the deadline passes, failing t
// with msg.
func eventually(t testing.TB, timeout time.Duration, cond func() bool, msg func() string) {
	t.Helper()
	localawstest.EventuallyState(t, timeout, "the condition", func() (bool, string) {
		if cond() {
			return true, ""
		}
		return false, msg()
	})
}

func (f *fixture) status(t *testing.T, id string) esm.Status {
	t.Helper()
	st, ok := f.svc.Status(id)
	if !ok {
		t.Fatalf("no status for %s", id)
	}
	return st
}

// waitCheckpoint waits until the mapping's checkpoint reaches seq.
func (f *fixture) waitCheckpoint(t *testing.T, id, seq string) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool {
		st := f.status(t, id)
		return len(st.Shards) > 0 && st.Shards[0].Checkpoint >= seq
	}, func() string { return fmt.Sprintf("checkpoint %+v, want %s", f.status(t, id).Shards, seq) })
}

func (f *fakeStream) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

package conformance_test

import (
	"context"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/conformance"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// deliveryTimeout bounds every wait for asynchronous delivery; generous,
// because the tests must pass on a loaded machine.
const deliveryTimeout = 45 * time.Second

// outboxFilter is the outbox relay's filter (see /work/shared/aws-semantics.md).
const outboxFilter = `{"eventName":["INSERT"],"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}`

// functionZip builds testdata/fn for goarch (once per test binary) and
// returns a deployment package with it as bootstrap.
func functionZip(t testing.TB, goarch string) []byte {
	t.Helper()
	return lambdatest.Zip(t, "./testdata/fn", goarch)
}

// awsEnv is a running stack and the SDK clients of an AWS user.
type awsEnv struct {
	t       testing.TB
	ctx     context.Context
	stack   *localaws.Stack
	ctl     *control.Client
	ddb     *dynamodb.Client
	streams *dynamodbstreams.Client
	lam     *lambda.Client
	iam     *iam.Client
	sqs     *sqs.Client
}

func newEnv(t testing.TB, opts ...func(*localaws.Options)) *awsEnv {
	t.Helper()
	s := localawstest.Start(t, opts...)
	cfg := localawstest.Config(s)
	return &awsEnv{
		t: t, ctx: context.Background(), stack: s, ctl: localawstest.Control(s),
		ddb:     dynamodb.NewFromConfig(cfg),
		streams: dynamodbstreams.NewFromConfig(cfg),
		lam:     lambda.NewFromConfig(cfg, func(o *lambda.Options) { o.RetryMaxAttempts = 1 }),
		iam:     iam.NewFromConfig(cfg),
		sqs:     sqs.NewFromConfig(cfg),
	}
}

// quickly sets an SDK waiter's delays to poll the local stack often.
func quickly(minDelay, maxDelay *time.Duration) {
	*minDelay, *maxDelay = 20*time.Millisecond, 200*time.Millisecond
}

// table creates a table keyed PK/SK with a NEW_AND_OLD_IMAGES stream and
// returns its ARN and stream ARN.
func (e *awsEnv) table(name string) (tableArn, streamArn string) {
	e.t.Helper()
	out, err := e.ddb.CreateTable(e.ctx, localawstest.TableInput(name, "PK", "SK", ddbtypes.StreamViewTypeNewAndOldImages))
	if err != nil {
		e.t.Fatalf("CreateTable %s: %v", name, err)
	}
	if err := dynamodb.NewTableExistsWaiter(e.ddb, func(o *dynamodb.TableExistsWaiterOptions) { quickly(&o.MinDelay, &o.MaxDelay) }).Wait(e.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 20*time.Second); err != nil {
		e.t.Fatal(err)
	}
	return aws.ToString(out.TableDescription.TableArn), aws.ToString(out.TableDescription.LatestStreamArn)
}

// queue creates a standard queue and returns its URL and ARN.
func (e *awsEnv) queue(name string) (url, arn string) {
	e.t.Helper()
	return e.queueWith(name, nil)
}

// queueWith is queue with attributes (such as those of a FIFO queue).
func (e *awsEnv) queueWith(name string, attributes map[string]string) (url, arn string) {
	e.t.Helper()
	out, err := e.sqs.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attributes})
	if err != nil {
		e.t.Fatalf("CreateQueue %s: %v", name, err)
	}
	attrs, err := e.sqs.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		e.t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl), attrs.Attributes["QueueArn"]
}

// statement is one Allow statement of an identity policy.
type statement struct {
	Effect   string
	Action   []string
	Resource []string
}

func allow(resource string, actions ...string) statement {
	return statement{Effect: "Allow", Action: actions, Resource: []string{resource}}
}

// streamRead is what Lambda needs on a DynamoDB stream.
func streamRead(streamArn string) statement {
	return allow(streamArn, "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams")
}

// role creates a role Lambda can assume with one inline policy holding
// statements (none: no policy) and returns its ARN.
func (e *awsEnv) role(name string, statements ...statement) string {
	e.t.Helper()
	out, err := e.iam.CreateRole(e.ctx, &iam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com"))})
	if err != nil {
		e.t.Fatalf("CreateRole %s: %v", name, err)
	}
	if len(statements) > 0 {
		e.putPolicy(name, "least-privilege", statements...)
	}
	return aws.ToString(out.Role.Arn)
}

func (e *awsEnv) putPolicy(roleName, policyName string, statements ...statement) {
	e.t.Helper()
	doc, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": statements})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.iam.PutRolePolicy(e.ctx, &iam.PutRolePolicyInput{
		RoleName: aws.String(roleName), PolicyName: aws.String(policyName), PolicyDocument: aws.String(string(doc)),
	}); err != nil {
		e.t.Fatalf("PutRolePolicy %s: %v", roleName, err)
	}
}

// function deploys the test function for goarch with the role and waits
// until it is Active. recordQueueURL receives its reports.
func (e *awsEnv) function(name, roleArn, goarch, recordQueueURL string) string {
	e.t.Helper()
	arch := lambdatypes.ArchitectureX8664
	if goarch == "arm64" {
		arch = lambdatypes.ArchitectureArm64
	}
	in := &lambda.CreateFunctionInput{
		FunctionName:  aws.String(name),
		Runtime:       lambdatypes.RuntimeProvidedal2023,
		Handler:       aws.String("bootstrap"),
		Role:          aws.String(roleArn),
		Code:          &lambdatypes.FunctionCode{ZipFile: functionZip(e.t, goarch)},
		Architectures: []lambdatypes.Architecture{arch},
		Timeout:       aws.Int32(60),
		Environment:   &lambdatypes.Environment{Variables: map[string]string{"RECORD_QUEUE_URL": recordQueueURL}},
	}
	var out *lambda.CreateFunctionOutput
	err := localawstest.RetryIAM(func() (err error) {
		out, err = e.lam.CreateFunction(e.ctx, in)
		return err
	})
	if err != nil {
		e.t.Fatalf("CreateFunction %s: %v", name, err)
	}
	if err := lambda.NewFunctionActiveV2Waiter(e.lam, func(o *lambda.FunctionActiveV2WaiterOptions) { quickly(&o.MinDelay, &o.MaxDelay) }).Wait(e.ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)}, 30*time.Second); err != nil {
		e.t.Fatal(err)
	}
	return aws.ToString(out.FunctionArn)
}

// mapping creates an event source mapping (TRIM_HORIZON unless set) and
// waits until it is Enabled.
func (e *awsEnv) mapping(in *lambda.CreateEventSourceMappingInput) string {
	e.t.Helper()
	if in.StartingPosition == "" {
		in.StartingPosition = lambdatypes.EventSourcePositionTrimHorizon
	}
	var out *lambda.CreateEventSourceMappingOutput
	err := localawstest.RetryIAM(func() (err error) {
		out, err = e.lam.CreateEventSourceMapping(e.ctx, in)
		return err
	})
	if err != nil {
		e.t.Fatalf("CreateEventSourceMapping: %v", err)
	}
	uuid := aws.ToString(out.UUID)
	localawstest.EventuallyState(e.t, 20*time.Second, "the mapping to be Enabled", func() (bool, string) {
		got, err := e.lam.GetEventSourceMapping(e.ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
		if err != nil {
			return false, err.Error()
		}
		return aws.ToString(got.State) == "Enabled", aws.ToString(got.State)
	})
	return uuid
}

func filters(patterns ...string) *lambdatypes.FilterCriteria {
	fc := &lambdatypes.FilterCriteria{}
	for _, p := range patterns {
		fc.Filters = append(fc.Filters, lambdatypes.Filter{Pattern: aws.String(p)})
	}
	return fc
}

// put writes an item with string attributes and extra attributes.
func (e *awsEnv) put(table, pk, sk string, extra map[string]ddbtypes.AttributeValue) {
	e.t.Helper()
	item := map[string]ddbtypes.AttributeValue{"PK": str(pk), "SK": str(sk)}
	maps.Copy(item, extra)
	if _, err := e.ddb.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		e.t.Fatalf("PutItem %s/%s: %v", pk, sk, err)
	}
}

func str(s string) ddbtypes.AttributeValue   { return &ddbtypes.AttributeValueMemberS{Value: s} }
func num(n string) ddbtypes.AttributeValue   { return &ddbtypes.AttributeValueMemberN{Value: n} }
func boolean(b bool) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberBOOL{Value: b} }

func key(pk, sk string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"PK": str(pk), "SK": str(sk)}
}

// streamRecords reads every record of a stream's shard from the trim
// horizon through the dynamodbstreams client.
func (e *awsEnv) streamRecords(streamArn string) []streamtypes.Record {
	e.t.Helper()
	desc, err := e.streams.DescribeStream(e.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(streamArn)})
	if err != nil {
		e.t.Fatalf("DescribeStream: %v", err)
	}
	var out []streamtypes.Record
	for _, sh := range desc.StreamDescription.Shards {
		it, err := e.streams.GetShardIterator(e.ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(streamArn), ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			e.t.Fatalf("GetShardIterator: %v", err)
		}
		iter := it.ShardIterator
		for iter != nil {
			recs, err := e.streams.GetRecords(e.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				e.t.Fatalf("GetRecords: %v", err)
			}
			out = append(out, recs.Records...)
			if len(recs.Records) == 0 {
				break
			}
			iter = recs.NextShardIterator
		}
	}
	return out
}

// seqOf returns the sequence number of the first stream record of an item
// with the given event name ("" when none).
func seqOf(recs []streamtypes.Record, eventName, pk, sk string) string {
	for _, r := range recs {
		if string(r.EventName) != eventName {
			continue
		}
		k := r.Dynamodb.Keys
		p, _ := k["PK"].(*streamtypes.AttributeValueMemberS)
		s, _ := k["SK"].(*streamtypes.AttributeValueMemberS)
		if p != nil && s != nil && p.Value == pk && s.Value == sk {
			return aws.ToString(r.Dynamodb.SequenceNumber)
		}
	}
	return ""
}

// Report is a message of the test function.
type Report = conformance.Report

// recorder reads the test function's reports from its queue.
type recorder struct {
	e       *awsEnv
	url     string
	reports []Report
}

func (e *awsEnv) recorder(url string) *recorder { return &recorder{e: e, url: url} }

// drain moves the queue's messages into r.reports, ordered by the time the
// function took them.
func (r *recorder) drain() {
	r.e.t.Helper()
	for {
		out, err := r.e.sqs.ReceiveMessage(r.e.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(r.url), MaxNumberOfMessages: 10})
		if err != nil {
			r.e.t.Fatalf("ReceiveMessage: %v", err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			var rep Report
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &rep); err != nil {
				r.e.t.Fatalf("report %q: %v", aws.ToString(m.Body), err)
			}
			r.reports = append(r.reports, rep)
			if _, err := r.e.sqs.DeleteMessage(r.e.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(r.url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				r.e.t.Fatalf("DeleteMessage: %v", err)
			}
		}
	}
	slices.SortStableFunc(r.reports, func(a, b Report) int {
		switch {
		case a.AtNanos < b.AtNanos:
			return -1
		case a.AtNanos > b.AtNanos:
			return 1
		}
		return 0
	})
}

// phase returns the reports of one phase ("start" or "done").
func (r *recorder) phase(p string) []Report {
	var out []Report
	for _, rep := range r.reports {
		if rep.Phase == p {
			out = append(out, rep)
		}
	}
	return out
}

// delivered returns the items of records in successful invocations
// ("done" reports) with how many times each was delivered.
func (r *recorder) delivered() map[string]int {
	out := map[string]int{}
	for _, rep := range r.phase("done") {
		for _, it := range rep.Items() {
			out[it]++
		}
	}
	return out
}

// waitDelivered waits until every item ("INSERT pk/sk") was delivered in
// a successful invocation.
func (r *recorder) waitDelivered(items ...string) {
	r.e.t.Helper()
	localawstest.EventuallyState(r.e.t, deliveryTimeout, "delivery of "+strings.Join(items, ", "), func() (bool, string) {
		r.drain()
		got := r.delivered()
		for _, it := range items {
			if got[it] == 0 {
				return false, describe(r.reports)
			}
		}
		return true, ""
	})
}

func describe(reps []Report) string {
	var b strings.Builder
	for _, rep := range reps {
		b.WriteString("\n  " + rep.Phase + " " + strings.Join(rep.Items(), ", "))
		if len(rep.Failed) > 0 {
			b.WriteString(" failed=" + strings.Join(rep.Failed, ","))
		}
	}
	return b.String()
}

// status returns a mapping's poller status through the control API.
func (e *awsEnv) status(uuid string) control.MappingStatus {
	e.t.Helper()
	st, err := e.ctl.MappingStatus(e.ctx, uuid)
	if err != nil {
		e.t.Fatalf("mapping status: %v", err)
	}
	return st
}

// waitCheckpoint waits until the mapping's checkpoint reaches seq.
func (e *awsEnv) waitCheckpoint(uuid, seq string) {
	e.t.Helper()
	localawstest.EventuallyState(e.t, deliveryTimeout, "the checkpoint to reach "+seq, func() (bool, string) {
		st := e.status(uuid)
		if len(st.Shards) != 1 {
			return false, "shards: " + jsonString(st.Shards)
		}
		return st.Shards[0].Checkpoint >= seq && st.Shards[0].InFlight == 0, jsonString(st)
	})
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hostArch is the GOARCH of functions that run natively.
func hostArch() string { return runtime.GOARCH }

// fixture is a table with a stream, a recording queue and the test
// function, with a role allowed exactly what the function and its mapping
// need (plus extra statements).
type fixture struct {
	*awsEnv
	table, tableArn, streamArn string
	roleName, roleArn, fnArn   string
	rec                        *recorder
}

func newFixture(e *awsEnv, goarch string, extra ...statement) *fixture {
	e.t.Helper()
	f := &fixture{awsEnv: e, table: "outbox", roleName: "relay-role"}
	f.tableArn, f.streamArn = e.table(f.table)
	recURL, recArn := e.queue("invocations")
	statements := append([]statement{streamRead(f.streamArn), allow(recArn, "sqs:SendMessage")}, extra...)
	f.roleArn = e.role(f.roleName, statements...)
	f.fnArn = e.function("relay", f.roleArn, goarch, recURL)
	f.rec = e.recorder(recURL)
	return f
}

// mapping creates a mapping of the fixture's stream to its function.
func (f *fixture) mapping(mod func(*lambda.CreateEventSourceMappingInput)) string {
	f.t.Helper()
	in := &lambda.CreateEventSourceMappingInput{EventSourceArn: aws.String(f.streamArn), FunctionName: aws.String("relay")}
	if mod != nil {
		mod(in)
	}
	return f.awsEnv.mapping(in)
}

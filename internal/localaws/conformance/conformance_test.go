package conformance_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// wantDelivered compares what successful invocations received with want
// (item → times delivered).
func wantDelivered(t *testing.T, r *recorder, want map[string]int) {
	t.Helper()
	if got := r.delivered(); !maps.Equal(got, want) {
		t.Fatalf("delivered %v, want %v; invocations:%s", got, want, describe(r.reports))
	}
}

// TestFilteredRecordsAreNeverDelivered: with the outbox filter, only
// INSERTs of OUTBOX# items reach the function; other inserts, MODIFY and
// REMOVE of outbox items are dropped, the checkpoint moves past them and
// they are not delivered later, not even after the poller restarts.
func TestFilteredRecordsAreNeverDelivered(t *testing.T) {
	t.Parallel()
	f := newFixture(newEnv(t), hostArch())
	uuid := f.mapping(func(in *lambda.CreateEventSourceMappingInput) {
		in.FilterCriteria = filters(outboxFilter)
		in.BatchSize = aws.Int32(10)
	})
	f.put(f.table, "order#1", "OUTBOX#0001", map[string]ddbtypes.AttributeValue{"n": num("1")})
	f.put(f.table, "order#1", "STATE", nil)
	if _, err := f.ddb.UpdateItem(f.ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(f.table), Key: key("order#1", "OUTBOX#0001"),
		UpdateExpression: aws.String("SET n = :n"), ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":n": num("2")},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ddb.DeleteItem(f.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.table), Key: key("order#1", "OUTBOX#0001")}); err != nil {
		t.Fatal(err)
	}
	f.put(f.table, "order#3", "outbox#0003", nil) // prefixes are case-sensitive
	f.put(f.table, "order#3", "X-OUTBOX#0003", nil)
	f.put(f.table, "order#2", "OUTBOX#0002", nil)

	f.rec.waitDelivered("INSERT order#1/OUTBOX#0001", "INSERT order#2/OUTBOX#0002")
	recs := f.streamRecords(f.streamArn)
	if len(recs) != 7 {
		t.Fatalf("the stream has %d records, want 7", len(recs))
	}
	last := aws.ToString(recs[len(recs)-1].Dynamodb.SequenceNumber)
	f.waitCheckpoint(uuid, last)
	if st := f.status(uuid); st.Counters.RecordsFiltered != 5 {
		t.Errorf("records filtered = %d, want 5: %s", st.Counters.RecordsFiltered, jsonString(st))
	}

	// Restart the poller: it resumes from the checkpoint, past the
	// filtered records.
	for _, enabled := range []bool{false, true} {
		if _, err := f.lam.UpdateEventSourceMapping(f.ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(uuid), Enabled: aws.Bool(enabled)}); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "Disabled", true: "Enabled"}[enabled]
		localawstest.EventuallyState(f.t, 20*time.Second, "the mapping to be "+want, func() (bool, string) {
			got, err := f.lam.GetEventSourceMapping(f.ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
			if err != nil {
				return false, err.Error()
			}
			return aws.ToString(got.State) == want, aws.ToString(got.State)
		})
	}
	f.put(f.table, "order#4", "OUTBOX#0004", nil)
	f.rec.waitDelivered("INSERT order#4/OUTBOX#0004")
	f.rec.drain()
	wantDelivered(t, f.rec, map[string]int{
		"INSERT order#1/OUTBOX#0001": 1, "INSERT order#2/OUTBOX#0002": 1, "INSERT order#4/OUTBOX#0004": 1,
	})
	for _, rep := range f.rec.reports {
		for _, rc := range rep.Records {
			if rc.EventName != "INSERT" || !strings.HasPrefix(rc.SK, "OUTBOX#") {
				t.Errorf("a filtered-out record reached the function: %+v", rc)
			}
		}
	}
}

// TestTransactionRecordsReachTheFunction: every item of a
// TransactWriteItems produces its own stream record and each reaches the
// function (here an arm64 function, emulated when the host is not arm64);
// a cancelled transaction produces none.
func TestTransactionRecordsReachTheFunction(t *testing.T) {
	t.Parallel()
	arch := "arm64"
	if runtime.GOARCH != "arm64" {
		if _, err := exec.LookPath("qemu-aarch64"); err != nil {
			t.Logf("qemu-aarch64 is not installed (Debian package qemu-user): running the function on %s", runtime.GOARCH)
			arch = hostArch()
		}
	}
	f := newFixture(newEnv(t), arch)
	conf, err := f.lam.GetFunctionConfiguration(f.ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String("relay")})
	if err != nil || len(conf.Architectures) != 1 || string(conf.Architectures[0]) != map[string]string{"arm64": "arm64", "amd64": "x86_64"}[arch] {
		t.Fatalf("function architectures %v (%v), want %s", conf.Architectures, err, arch)
	}
	f.put(f.table, "order#9", "STATE", map[string]ddbtypes.AttributeValue{"status": str("new")})
	f.put(f.table, "order#9", "OUTBOX#old", nil)
	f.put(f.table, "order#9", "GUARD", nil)
	f.mapping(func(in *lambda.CreateEventSourceMappingInput) { in.BatchSize = aws.Int32(100) })
	f.rec.waitDelivered("INSERT order#9/STATE", "INSERT order#9/OUTBOX#old", "INSERT order#9/GUARD")

	put := func(pk, sk string) ddbtypes.TransactWriteItem {
		return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String(f.table), Item: key(pk, sk)}}
	}
	_, err = f.ddb.TransactWriteItems(f.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		put("order#9", "OUTBOX#0001"),
		put("order#9", "OUTBOX#0002"),
		put("order#10", "OUTBOX#0003"),
		{Update: &ddbtypes.Update{
			TableName: aws.String(f.table), Key: key("order#9", "STATE"),
			UpdateExpression:          aws.String("SET #s = :s"),
			ExpressionAttributeNames:  map[string]string{"#s": "status"},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":s": str("placed")},
		}},
		{Delete: &ddbtypes.Delete{TableName: aws.String(f.table), Key: key("order#9", "OUTBOX#old")}},
		{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName: aws.String(f.table), Key: key("order#9", "GUARD"), ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
	}})
	if err != nil {
		t.Fatalf("TransactWriteItems: %v", err)
	}
	_, err = f.ddb.TransactWriteItems(f.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		put("order#12", "OUTBOX#cancelled"),
		{ConditionCheck: &ddbtypes.ConditionCheck{
			TableName: aws.String(f.table), Key: key("order#9", "STATE"), ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}},
	}})
	tce := localawstest.ErrorAs[*ddbtypes.TransactionCanceledException](t, err, "cancelled TransactWriteItems")
	var reasons []string
	for _, r := range tce.CancellationReasons {
		reasons = append(reasons, aws.ToString(r.Code))
	}
	if !slices.Equal(reasons, []string{"None", "ConditionalCheckFailed"}) {
		t.Errorf("cancellation reasons = %v", reasons)
	}
	f.put(f.table, "order#13", "OUTBOX#after", nil)

	f.rec.waitDelivered("INSERT order#9/OUTBOX#0001", "INSERT order#9/OUTBOX#0002", "INSERT order#10/OUTBOX#0003",
		"MODIFY order#9/STATE", "REMOVE order#9/OUTBOX#old", "INSERT order#13/OUTBOX#after")
	recs := f.streamRecords(f.streamArn)
	f.rec.drain()
	if len(recs) != 9 {
		t.Errorf("the stream has %d records, want 9 (3 puts, 5 from the transaction, 1 put)", len(recs))
	}
	wantDelivered(t, f.rec, map[string]int{
		"INSERT order#9/STATE": 1, "INSERT order#9/OUTBOX#old": 1, "INSERT order#9/GUARD": 1,
		"INSERT order#9/OUTBOX#0001": 1, "INSERT order#9/OUTBOX#0002": 1, "INSERT order#10/OUTBOX#0003": 1,
		"MODIFY order#9/STATE": 1, "REMOVE order#9/OUTBOX#old": 1, "INSERT order#13/OUTBOX#after": 1,
	})
}

// TestReportBatchItemFailures: the function fails the middle record of a
// batch twice; Lambda checkpoints before it and retries from it, so the
// records before it are delivered once and the records from it on are
// delivered again until the batch succeeds.
func TestReportBatchItemFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(newEnv(t), hostArch())
	for i := 1; i <= 5; i++ {
		extra := map[string]ddbtypes.AttributeValue{}
		if i == 3 {
			extra["failCount"] = num("2")
		}
		f.put(f.table, "order#1", fmt.Sprintf("OUTBOX#%d", i), extra)
	}
	recs := f.streamRecords(f.streamArn)
	if len(recs) != 5 {
		t.Fatalf("the stream has %d records", len(recs))
	}
	seq := func(i int) string { return aws.ToString(recs[i-1].Dynamodb.SequenceNumber) }
	uuid := f.mapping(func(in *lambda.CreateEventSourceMappingInput) {
		in.BatchSize = aws.Int32(10)
		in.FunctionResponseTypes = []lambdatypes.FunctionResponseType{lambdatypes.FunctionResponseTypeReportBatchItemFailures}
	})
	f.waitCheckpoint(uuid, seq(5))
	localawstest.EventuallyState(f.t, deliveryTimeout, "three invocations", func() (bool, string) {
		f.rec.drain()
		return len(f.rec.phase("done")) >= 3, describe(f.rec.reports)
	})
	done := f.rec.phase("done")
	want := []struct {
		seqs   []string
		failed []string
	}{
		{[]string{seq(1), seq(2), seq(3), seq(4), seq(5)}, []string{seq(3)}},
		{[]string{seq(3), seq(4), seq(5)}, []string{seq(3)}},
		{[]string{seq(3), seq(4), seq(5)}, nil},
	}
	if len(done) != len(want) {
		t.Fatalf("%d invocations, want %d:%s", len(done), len(want), describe(f.rec.reports))
	}
	for i, w := range want {
		if !slices.Equal(done[i].Seqs(), w.seqs) || !slices.Equal(done[i].Failed, w.failed) {
			t.Errorf("invocation %d got %v failed %v, want %v failed %v", i+1, done[i].Seqs(), done[i].Failed, w.seqs, w.failed)
		}
	}
	if st := f.status(uuid); st.Counters.PartialFailures != 2 {
		t.Errorf("partial failures = %d, want 2", st.Counters.PartialFailures)
	}
}

// onFailureKeys are the members of the documented invocation record of a
// DynamoDB stream mapping's on-failure destination, by section ("" for
// the top level).
var onFailureKeys = map[string][]string{
	"":                   {"requestContext", "responseContext", "version", "timestamp", "DDBStreamBatchInfo"},
	"requestContext":     {"requestId", "functionArn", "condition", "approximateInvokeCount"},
	"responseContext":    {"statusCode", "executedVersion", "functionError"},
	"DDBStreamBatchInfo": {"shardId", "startSequenceNumber", "endSequenceNumber", "approximateArrivalOfFirstRecord", "approximateArrivalOfLastRecord", "batchSize", "streamArn"},
}

// checkOnFailureKeys fails t unless body carries exactly the documented
// members of an on-failure record: metadata, never the records.
func checkOnFailureKeys(t *testing.T, body string) {
	t.Helper()
	for section, keys := range onFailureKeys {
		var raw map[string]json.RawMessage
		doc := []byte(body)
		if section != "" {
			var top map[string]json.RawMessage
			if err := json.Unmarshal(doc, &top); err != nil {
				t.Fatal(err)
			}
			doc = top[section]
		}
		if err := json.Unmarshal(doc, &raw); err != nil {
			t.Fatalf("on-failure record section %q: %v: %s", section, err, body)
		}
		for _, k := range keys {
			if _, ok := raw[k]; !ok {
				t.Errorf("the on-failure record has no %q in section %q: %s", k, section, body)
			}
		}
		if len(raw) != len(keys) {
			t.Errorf("the on-failure record's section %q has %d members, want %v: %s", section, len(raw), keys, body)
		}
	}
}

// TestBisectBatchOnFunctionError: a poison record makes the function
// throw; the batch is split until the healthy records are delivered, and
// the poison record, once its retries are exhausted, goes to the
// on-failure queue as metadata only.
func TestBisectBatchOnFunctionError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dlqURL, dlqArn := e.queue("relay-dlq")
	f := newFixture(e, hostArch(), allow(dlqArn, "sqs:SendMessage"))
	for i := 1; i <= 4; i++ {
		extra := map[string]ddbtypes.AttributeValue{}
		if i == 3 {
			extra["poison"] = boolean(true)
		}
		f.put(f.table, "order#1", fmt.Sprintf("OUTBOX#%d", i), extra)
	}
	recs := f.streamRecords(f.streamArn)
	seq := func(i int) string { return aws.ToString(recs[i-1].Dynamodb.SequenceNumber) }
	uuid := f.mapping(func(in *lambda.CreateEventSourceMappingInput) {
		in.BatchSize = aws.Int32(4)
		in.BisectBatchOnFunctionError = aws.Bool(true)
		in.MaximumRetryAttempts = aws.Int32(1)
		in.DestinationConfig = &lambdatypes.DestinationConfig{OnFailure: &lambdatypes.OnFailure{Destination: aws.String(dlqArn)}}
	})
	f.waitCheckpoint(uuid, seq(4))

	var body string
	localawstest.EventuallyState(f.t, deliveryTimeout, "the on-failure record", func() (bool, string) {
		out, err := f.sqs.ReceiveMessage(f.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL), MaxNumberOfMessages: 10})
		if err != nil {
			return false, err.Error()
		}
		if len(out.Messages) > 1 {
			t.Fatalf("%d on-failure records, want 1", len(out.Messages))
		}
		if len(out.Messages) == 1 {
			body = aws.ToString(out.Messages[0].Body)
			return true, ""
		}
		return false, "no message"
	})
	checkOnFailureKeys(t, body)
	var rec esm.OnFailureRecord
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		t.Fatal(err)
	}
	desc, err := f.streams.DescribeStream(f.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(f.streamArn)})
	if err != nil {
		t.Fatal(err)
	}
	b := rec.DDBStreamBatchInfo
	if rec.RequestContext.Condition != "RetryAttemptsExhausted" || rec.RequestContext.FunctionArn != f.fnArn ||
		rec.RequestContext.ApproximateInvokeCount != 2 || rec.ResponseContext.FunctionError != "Unhandled" ||
		rec.ResponseContext.StatusCode != 200 || rec.Version != "1.0" ||
		b.ShardID != aws.ToString(desc.StreamDescription.Shards[0].ShardId) || b.StreamArn != f.streamArn ||
		b.StartSequenceNumber != seq(3) || b.EndSequenceNumber != seq(3) || b.BatchSize != 1 ||
		b.ApproximateArrivalOfFirstRecord == "" || b.ApproximateArrivalOfLastRecord == "" {
		t.Errorf("on-failure record:\n%s\nwant the poison record %s alone, RetryAttemptsExhausted after 2 invocations", body, seq(3))
	}

	f.rec.drain()
	wantDelivered(t, f.rec, map[string]int{"INSERT order#1/OUTBOX#1": 1, "INSERT order#1/OUTBOX#2": 1, "INSERT order#1/OUTBOX#4": 1})
	var started [][]string
	for _, rep := range f.rec.phase("start") {
		started = append(started, rep.Seqs())
	}
	wantStarted := [][]string{
		{seq(1), seq(2), seq(3), seq(4)},
		{seq(1), seq(2)},
		{seq(3), seq(4)},
		{seq(3)},
		{seq(3)},
		{seq(4)},
	}
	if !slices.EqualFunc(started, wantStarted, slices.Equal) {
		t.Errorf("invocations %v, want %v", started, wantStarted)
	}
}

// TestTrimmedRecordsAreSkipped: records trimmed from the stream while the
// mapping was paused are never delivered; later records are.
func TestTrimmedRecordsAreSkipped(t *testing.T) {
	t.Parallel()
	const retention = 3 * time.Second
	f := newFixture(newEnv(t, func(o *localaws.Options) { o.StreamRetention = retention }), hostArch())
	uuid := f.mapping(nil)
	f.put(f.table, "order#1", "OUTBOX#A", nil)
	f.rec.waitDelivered("INSERT order#1/OUTBOX#A")
	if _, err := f.ctl.PauseMapping(f.ctx, uuid); err != nil {
		t.Fatal(err)
	}
	f.put(f.table, "order#1", "OUTBOX#B", nil)
	f.put(f.table, "order#1", "OUTBOX#C", nil)
	recs := f.streamRecords(f.streamArn)
	seqB, seqC := seqOf(recs, "INSERT", "order#1", "OUTBOX#B"), seqOf(recs, "INSERT", "order#1", "OUTBOX#C")
	if seqB == "" || seqC == "" {
		t.Fatalf("records of B and C not found in %d records", len(recs))
	}
	localawstest.EventuallyState(f.t, 6*retention, "B and C to be trimmed", func() (bool, string) {
		_, err := f.streams.GetShardIterator(f.ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(f.streamArn), ShardId: recsShard(t, f), ShardIteratorType: streamtypes.ShardIteratorTypeAtSequenceNumber,
			SequenceNumber: aws.String(seqC),
		})
		var trimmed *streamtypes.TrimmedDataAccessException
		return errors.As(err, &trimmed), fmt.Sprint(err)
	})
	desc, err := f.streams.DescribeStream(f.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(f.streamArn)})
	if err != nil {
		t.Fatal(err)
	}
	if start := aws.ToString(desc.StreamDescription.Shards[0].SequenceNumberRange.StartingSequenceNumber); start <= seqC {
		t.Errorf("the trim horizon %s is not past C (%s)", start, seqC)
	}
	f.put(f.table, "order#1", "OUTBOX#D", nil)
	if _, err := f.ctl.ResumeMapping(f.ctx, uuid); err != nil {
		t.Fatal(err)
	}
	f.rec.waitDelivered("INSERT order#1/OUTBOX#D")
	f.rec.drain()
	wantDelivered(t, f.rec, map[string]int{"INSERT order#1/OUTBOX#A": 1, "INSERT order#1/OUTBOX#D": 1})
	if st := f.status(uuid); st.Counters.RecordsTrimmed < 1 {
		t.Errorf("the mapping saw no trimmed records: %s", jsonString(st))
	}
}

func recsShard(t *testing.T, f *fixture) *string {
	t.Helper()
	desc, err := f.streams.DescribeStream(f.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(f.streamArn)})
	if err != nil || len(desc.StreamDescription.Shards) == 0 {
		t.Fatalf("DescribeStream: %v", err)
	}
	return desc.StreamDescription.Shards[0].ShardId
}

// TestTTLRemoveRecord: a TTL delete emits a REMOVE record whose
// userIdentity is the DynamoDB service, visible through GetRecords and
// usable in a mapping's filter; a user's delete has no userIdentity.
func TestTTLRemoveRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(newEnv(t), hostArch())
	if _, err := f.ddb.UpdateTimeToLive(f.ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(f.table),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)},
	}); err != nil {
		t.Fatal(err)
	}
	uuid := f.mapping(func(in *lambda.CreateEventSourceMappingInput) {
		in.FilterCriteria = filters(`{"eventName":["REMOVE"],"userIdentity":{"type":["Service"],"principalId":["dynamodb.amazonaws.com"]}}`)
	})
	now := time.Now().Unix()
	f.put(f.table, "order#1", "OUTBOX#live", map[string]ddbtypes.AttributeValue{"expiresAt": num(strconv.FormatInt(now+3600, 10))})
	f.put(f.table, "order#1", "OUTBOX#user", nil)
	if _, err := f.ddb.DeleteItem(f.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.table), Key: key("order#1", "OUTBOX#user")}); err != nil {
		t.Fatal(err)
	}
	f.put(f.table, "order#1", "OUTBOX#expired", map[string]ddbtypes.AttributeValue{"expiresAt": num(strconv.FormatInt(now-60, 10))})

	f.rec.waitDelivered("REMOVE order#1/OUTBOX#expired")
	recs := f.streamRecords(f.streamArn)
	var ttlRemove, userRemove *streamtypes.Record
	for i, r := range recs {
		if r.EventName != streamtypes.OperationTypeRemove {
			continue
		}
		switch r.Dynamodb.Keys["SK"].(*streamtypes.AttributeValueMemberS).Value {
		case "OUTBOX#expired":
			ttlRemove = &recs[i]
		case "OUTBOX#user":
			userRemove = &recs[i]
		default:
			t.Errorf("unexpected REMOVE: %+v", r.Dynamodb.Keys)
		}
	}
	if ttlRemove == nil || userRemove == nil {
		t.Fatalf("REMOVE records: TTL %v, user %v", ttlRemove, userRemove)
	}
	if ui := ttlRemove.UserIdentity; ui == nil || aws.ToString(ui.Type) != "Service" || aws.ToString(ui.PrincipalId) != "dynamodb.amazonaws.com" {
		t.Errorf("TTL REMOVE userIdentity = %+v", ui)
	}
	if ttlRemove.Dynamodb.OldImage == nil || ttlRemove.Dynamodb.NewImage != nil {
		t.Errorf("TTL REMOVE images: old %v new %v", ttlRemove.Dynamodb.OldImage, ttlRemove.Dynamodb.NewImage)
	}
	if userRemove.UserIdentity != nil {
		t.Errorf("a user's REMOVE has userIdentity %+v", userRemove.UserIdentity)
	}
	f.waitCheckpoint(uuid, aws.ToString(recs[len(recs)-1].Dynamodb.SequenceNumber))
	f.rec.drain()
	wantDelivered(t, f.rec, map[string]int{"REMOVE order#1/OUTBOX#expired": 1})
	ui := f.rec.phase("done")[0].Records[0].UserIdentity
	if ui == nil || ui.Type != "Service" || ui.PrincipalID != "dynamodb.amazonaws.com" {
		t.Errorf("the function got userIdentity %+v", ui)
	}
	got, err := f.ddb.GetItem(f.ctx, &dynamodb.GetItemInput{TableName: aws.String(f.table), Key: key("order#1", "OUTBOX#live")})
	if err != nil || got.Item == nil {
		t.Errorf("the unexpired item is gone: %v", err)
	}
}

// TestIAMDenial: CreateEventSourceMapping fails with Lambda's messages
// while the execution role cannot read the stream or send to the
// destination, and a function whose role lacks dynamodb:PutItem gets
// AccessDeniedException when it writes.
func TestIAMDenial(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tableArn, streamArn := e.table("outbox")
	_, otherStream := e.table("other")
	recURL, recArn := e.queue("invocations")
	_, dlqArn := e.queue("relay-dlq")
	roleArn := e.role("relay-role", allow(recArn, "sqs:SendMessage"))
	fnArn := e.function("relay", roleArn, hostArch(), recURL)

	create := func(dest string) error {
		in := &lambda.CreateEventSourceMappingInput{
			EventSourceArn: aws.String(streamArn), FunctionName: aws.String(fnArn),
			StartingPosition: lambdatypes.EventSourcePositionTrimHorizon,
		}
		if dest != "" {
			in.DestinationConfig = &lambdatypes.DestinationConfig{OnFailure: &lambdatypes.OnFailure{Destination: aws.String(dest)}}
		}
		_, err := e.lam.CreateEventSourceMapping(e.ctx, in)
		return err
	}
	wantInvalid := func(err error, msg string) {
		t.Helper()
		var ipv *lambdatypes.InvalidParameterValueException
		if !errors.As(err, &ipv) || ipv.ErrorMessage() != msg {
			t.Fatalf("CreateEventSourceMapping: %v\nwant InvalidParameterValueException: %s", err, msg)
		}
	}
	streamMsg := "Cannot access stream " + streamArn + ". Please ensure the role can perform the GetRecords, GetShardIterator, DescribeStream, and ListStreams Actions on your stream in IAM."
	wantInvalid(create(""), streamMsg)
	// Stream permissions on another table's stream do not count.
	e.putPolicy("relay-role", "stream", streamRead(otherStream))
	wantInvalid(create(""), streamMsg)
	// Three of the four actions are not enough.
	e.putPolicy("relay-role", "stream", allow(streamArn, "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"))
	wantInvalid(create(""), streamMsg)
	e.putPolicy("relay-role", "stream", streamRead(streamArn))
	wantInvalid(create(dlqArn), "The provided execution role does not have permissions to call SendMessage on SQS")
	e.putPolicy("relay-role", "dlq", allow(dlqArn, "sqs:SendMessage"))
	if err := create(dlqArn); err != nil {
		t.Fatalf("CreateEventSourceMapping with every permission: %v", err)
	}

	invoke := func() *lambda.InvokeOutput {
		t.Helper()
		out, err := e.lam.Invoke(e.ctx, &lambda.InvokeInput{
			FunctionName: aws.String("relay"), LogType: lambdatypes.LogTypeTail,
			Payload: []byte(`{"action":"put","table":"outbox","pk":"order#1","sk":"OUTBOX#1"}`),
		})
		if err != nil {
			t.Fatalf("Invoke: %v", err)
		}
		return out
	}
	out := invoke()
	var fnErr struct {
		ErrorMessage string `json:"errorMessage"`
	}
	_ = json.Unmarshal(out.Payload, &fnErr)
	wantMsg := "is not authorized to perform: dynamodb:PutItem on resource: " + tableArn
	if aws.ToString(out.FunctionError) != "Unhandled" || !strings.Contains(fnErr.ErrorMessage, "AccessDeniedException") ||
		!strings.Contains(fnErr.ErrorMessage, "assumed-role/relay-role/relay") || !strings.Contains(fnErr.ErrorMessage, wantMsg) {
		t.Fatalf("Invoke without dynamodb:PutItem: function error %q, payload %s", aws.ToString(out.FunctionError), out.Payload)
	}
	logs, _ := base64.StdEncoding.DecodeString(aws.ToString(out.LogResult))
	if !strings.Contains(string(logs), "put failed: ") || !strings.Contains(string(logs), "AccessDeniedException") {
		t.Errorf("the function's log tail does not show the denial:\n%s", logs)
	}

	e.putPolicy("relay-role", "table", allow(tableArn, "dynamodb:PutItem"))
	if out := invoke(); out.FunctionError != nil {
		t.Fatalf("Invoke with dynamodb:PutItem: %s", out.Payload)
	}
	got, err := e.ddb.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String("outbox"), Key: key("order#1", "OUTBOX#1")})
	if err != nil || got.Item == nil {
		t.Fatalf("the function's item: %v %v", got, err)
	}
}

// TestKilledInvocationIsRetried: killing the function's process in the
// middle of an invocation fails that batch; it is retried whole and
// nothing is lost.
func TestKilledInvocationIsRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(newEnv(t), hostArch())
	f.put(f.table, "order#1", "OUTBOX#1", nil)
	f.put(f.table, "order#1", "OUTBOX#2", map[string]ddbtypes.AttributeValue{"sleepMs": num("3000")})
	f.put(f.table, "order#1", "OUTBOX#3", nil)
	uuid := f.mapping(func(in *lambda.CreateEventSourceMappingInput) { in.BatchSize = aws.Int32(10) })
	localawstest.EventuallyState(f.t, deliveryTimeout, "the first invocation to start", func() (bool, string) {
		f.rec.drain()
		return len(f.rec.phase("start")) > 0, describe(f.rec.reports)
	})
	killed, err := f.ctl.KillLambda(f.ctx, "relay")
	if err != nil || !killed {
		t.Fatalf("KillLambda = %v, %v; want a kill in the middle of the invocation", killed, err)
	}
	all := []string{"INSERT order#1/OUTBOX#1", "INSERT order#1/OUTBOX#2", "INSERT order#1/OUTBOX#3"}
	f.rec.waitDelivered(all...)
	f.put(f.table, "order#1", "OUTBOX#4", nil)
	f.rec.waitDelivered("INSERT order#1/OUTBOX#4")
	f.rec.drain()
	wantDelivered(t, f.rec, map[string]int{all[0]: 1, all[1]: 1, all[2]: 1, "INSERT order#1/OUTBOX#4": 1})
	starts := f.rec.phase("start")
	if len(starts) != 3 || !slices.Equal(starts[0].Items(), all) || !slices.Equal(starts[1].Items(), all) || starts[0].PID == starts[1].PID {
		t.Errorf("want the killed batch retried whole by a new process, then the next record; invocations:%s", describe(f.rec.reports))
	}
	got, err := f.lam.GetEventSourceMapping(f.ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
	if err != nil || aws.ToString(got.LastProcessingResult) != "OK" {
		t.Errorf("LastProcessingResult = %q (%v)", aws.ToString(got.LastProcessingResult), err)
	}
	if st := f.status(uuid); st.Counters.FunctionErrors+st.Counters.InvokeErrors != 1 {
		t.Errorf("want one failed invocation: %s", jsonString(st.Counters))
	}
}

package esm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
)

func TestEventPayloadIsLambdaShape(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	seq := f.stream.put("ORDER#1", "OUTBOX#1", now)
	f.create(t, &lambda.CreateEventSourceMappingInput{})
	eventually(t, 10*time.Second, func() bool { return len(f.fns.invocations()) == 1 }, func() string { return "no invocation" })
	inv := f.fns.invocations()[0]
	r := inv.event.Records[0]
	if r.EventSource != "aws:dynamodb" || r.EventSourceArn != streamArn || r.AWSRegion != "us-east-1" || r.EventName != "INSERT" || r.EventVersion != "1.1" || r.EventID != "ev1" {
		t.Errorf("record metadata: %+v", r)
	}
	if r.Change.SequenceNumber != seq || r.Change.Keys["SK"].String() != "OUTBOX#1" || r.Change.NewImage["n"].Number() != "1" ||
		r.Change.StreamViewType != "NEW_AND_OLD_IMAGES" || r.Change.SizeBytes != 40 || r.Change.ApproximateCreationDateTime.Unix() != now.Unix() {
		t.Errorf("dynamodb member: %+v", r.Change)
	}
	var raw struct {
		Records []map[string]json.RawMessage
	}
	if err := json.Unmarshal(inv.raw, &raw); err != nil || len(raw.Records) != 1 {
		t.Fatal(err)
	}
	var ddb map[string]json.RawMessage
	_ = json.Unmarshal(raw.Records[0]["dynamodb"], &ddb)
	if string(ddb["ApproximateCreationDateTime"]) != fmt.Sprint(now.Unix()) {
		t.Errorf("ApproximateCreationDateTime = %s, want epoch seconds %d", ddb["ApproximateCreationDateTime"], now.Unix())
	}
}

func TestFilterCriteria(t *testing.T) {
	cases := []struct {
		name    string
		filters []string
		want    []string // SKs delivered
	}{
		{"prefix on Keys.SK.S", []string{`{"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}`}, []string{"OUTBOX#1", "OUTBOX#2"}},
		{"eventName and prefix", []string{`{"eventName":["INSERT"],"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}}}`}, []string{"OUTBOX#1", "OUTBOX#2"}},
		{"eventName excludes", []string{`{"eventName":["REMOVE"]}`}, nil},
		{"anything-but", []string{`{"dynamodb":{"Keys":{"SK":{"S":[{"anything-but":{"prefix":"OUTBOX#"}}]}}}}`}, []string{"META", "LINE#1"}},
		{"numeric", []string{`{"dynamodb":{"SizeBytes":[{"numeric":[">",30,"<=",40]}]}}`}, []string{"OUTBOX#1", "META", "LINE#1", "OUTBOX#2"}},
		{"filters are ORed", []string{`{"dynamodb":{"Keys":{"SK":{"S":["META"]}}}}`, `{"dynamodb":{"Keys":{"SK":{"S":["LINE#1"]}}}}`}, []string{"META", "LINE#1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			var last string
			for _, sk := range []string{"OUTBOX#1", "META", "LINE#1", "OUTBOX#2"} {
				last = f.stream.put("ORDER#1", sk, time.Now())
			}
			var fc types.FilterCriteria
			for _, p := range c.filters {
				fc.Filters = append(fc.Filters, types.Filter{Pattern: aws.String(p)})
			}
			id := f.create(t, &lambda.CreateEventSourceMappingInput{FilterCriteria: &fc})
			// Records matching no filter are checkpointed past.
			f.waitCheckpoint(t, id, last)
			var got []string
			for _, inv := range f.fns.invocations() {
				for _, r := range inv.event.Records {
					got = append(got, r.Change.Keys["SK"].String())
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("delivered %v, want %v", got, c.want)
			}
			// and never redelivered.
			n := len(f.fns.invocations())
			reads := f.stream.readCount()
			eventually(t, 5*time.Second, func() bool { return f.stream.readCount() >= reads+5 }, func() string { return "poller stopped polling" })
			if len(f.fns.invocations()) != n {
				t.Errorf("invocations grew from %d to %d", n, len(f.fns.invocations()))
			}
			st := f.status(t, id)
			if st.Counters.RecordsFiltered != int64(4-len(c.want)) {
				t.Errorf("filtered counter = %d", st.Counters.RecordsFiltered)
			}
		})
	}
}

func TestBatchSizeAndOrder(t *testing.T) {
	f := newFixture(t)
	var seqs []string
	for i := range 25 {
		seqs = append(seqs, f.stream.put("P", fmt.Sprint(i), time.Now()))
	}
	id := f.create(t, &lambda.CreateEventSourceMappingInput{BatchSize: aws.Int32(10)})
	f.waitCheckpoint(t, id, seqs[24])
	for _, inv := range f.fns.invocations() {
		if len(inv.event.Records) > 10 {
			t.Errorf("batch of %d records, BatchSize 10", len(inv.event.Records))
		}
	}
	if got := f.fns.delivered(); !slices.Equal(got, seqs) {
		t.Errorf("delivered %v, want %v", got, seqs)
	}
}

func TestReportBatchItemFailuresRetriesFromTheFailedRecord(t *testing.T) {
	f := newFixture(t)
	var seqs []string
	for i := range 5 {
		seqs = append(seqs, f.stream.put("P", fmt.Sprint(i), time.Now()))
	}
	failed := false
	f.fns.setHandler(func(ev events.DynamoDBEvent) ([]byte, string, error) {
		if !failed {
			failed = true
			// Report records 2 and 3 as failed: Lambda retries from 2.
			return fmt.Appendf(nil, `{"batchItemFailures":[{"itemIdentifier":%q},{"itemIdentifier":%q}]}`, seqs[3], seqs[2]), "", nil
		}
		return []byte(`{"batchItemFailures":[]}`), "", nil
	})
	id := f.create(t, &lambda.CreateEventSourceMappingInput{
		FunctionResponseTypes: []types.FunctionResponseType{types.FunctionResponseTypeReportBatchItemFailures},
	})
	f.waitCheckpoint(t, id, seqs[4])
	invs := f.fns.invocations()
	if len(invs) != 2 || !slices.Equal(invs[0].seqs(), seqs) || !slices.Equal(invs[1].seqs(), seqs[2:]) {
		var got [][]string
		for _, i := range invs {
			got = append(got, i.seqs())
		}
		t.Fatalf("invocations %v, want %v then %v", got, seqs, seqs[2:])
	}
}

func TestInvalidItemIdentifierFailsTheWholeBatch(t *testing.T) {
	f := newFixture(t)
	var seqs []string
	for i := range 3 {
		seqs = append(seqs, f.stream.put("P", fmt.Sprint(i), time.Now()))
	}
	calls := 0
	f.fns.setHandler(func(ev events.DynamoDBEvent) ([]byte, string, error) {
		calls++
		if calls == 1 {
			return []byte(`{"batchItemFailures":[{"itemIdentifier":""}]}`), "", nil
		}
		return nil, "", nil
	})
	id := f.create(t, &lambda.CreateEventSourceMappingInput{
		FunctionResponseTypes: []types.FunctionResponseType{types.FunctionResponseTypeReportBatchItemFailures},
	})
	f.waitCheckpoint(t, id, seqs[2])
	invs := f.fns.invocations()
	if len(invs) != 2 || !slices.Equal(invs[1].seqs(), seqs) {
		t.Fatalf("want the whole batch retried, got %d invocations", len(invs))
	}
}

func TestBisectIsolatesTheBadRecord(t *testing.T) {
	f := newFixture(t)
	var seqs []string
	for i := range 4 {
		seqs = append(seqs, f.stream.put("P", fmt.Sprint(i), time.Now()))
	}
	bad := seqs[2]
	f.fns.setHandler(func(ev events.DynamoDBEvent) ([]byte, string, error) {
		for _, r := range ev.Records {
			if r.Change.SequenceNumber == bad {
				return []byte(`{"errorMessage":"boom"}`), "Unhandled", nil
			}
		}
		return nil, "", nil
	})
	id := f.create(t, &lambda.CreateEventSourceMappingInput{
		BisectBatchOnFunctionError: aws.Bool(true),
		MaximumRetryAttempts:       aws.Int32(1),
		DestinationConfig:          &types.DestinationConfig{OnFailure: &types.OnFailure{Destination: aws.String(queueArn)}},
	})
	f.waitCheckpoint(t, id, seqs[3])
	var got [][]string
	for _, i := range f.fns.invocations() {
		got = append(got, i.seqs())
	}
	// [0 1 2 3] fails → [0 1] ok, [2 3] fails → [2] fails twice (1 retry), [3] ok.
	want := [][]string{seqs, seqs[:2], seqs[2:], {bad}, {bad}, {seqs[3]}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("invocations %v, want %v", got, want)
	}
	msgs := f.queues.messages()
	if len(msgs) != 1 {
		t.Fatalf("on-failure messages: %v", msgs)
	}
	var rec esm.OnFailureRecord
	if err := json.Unmarshal([]byte(msgs[0]), &rec); err != nil {
		t.Fatal(err)
	}
	b := rec.DDBStreamBatchInfo
	if b.StartSequenceNumber != bad || b.EndSequenceNumber != bad || b.BatchSize != 1 || rec.RequestContext.ApproximateInvokeCount != 2 {
		t.Errorf("on-failure record %+v", rec)
	}
	if st := f.status(t, id); st.Counters.Bisects != 2 {
		t.Errorf("bisects = %d", st.Counters.Bisects)
	}
}

func TestRetriesExhaustedSendsTheOnFailureRecord(t *testing.T) {
	f := newFixture(t)
	s1 := f.stream.put("P", "1", time.Now())
	s2 := f.stream.put("P", "2", time.Now())
	f.fns.setHandler(func(events.DynamoDBEvent) ([]byte, string, error) {
		return []byte(`{"errorMessage":"boom","errorType":"Error"}`), "Unhandled", nil
	})
	id := f.create(t, &lambda.CreateEventSourceMappingInput{
		MaximumRetryAttempts: aws.Int32(2),
		DestinationConfig:    &types.DestinationConfig{OnFailure: &types.OnFailure{Destination: aws.String(queueArn)}},
	})
	f.waitCheckpoint(t, id, s2)
	if n := len(f.fns.invocations()); n != 3 {
		t.Errorf("invocations = %d, want 1 + 2 retries", n)
	}
	msgs := f.queues.messages()
	if len(msgs) != 1 {
		t.Fatalf("messages = %v", msgs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(msgs[0]), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requestContext", "responseContext", "version", "timestamp", "DDBStreamBatchInfo"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("on-failure record lacks %s: %s", k, msgs[0])
		}
	}
	var rec esm.OnFailureRecord
	_ = json.Unmarshal([]byte(msgs[0]), &rec)
	if rec.RequestContext.Condition != "RetryAttemptsExhausted" || rec.RequestContext.FunctionArn != fnArn || rec.RequestContext.ApproximateInvokeCount != 3 ||
		rec.ResponseContext.StatusCode != 200 || rec.ResponseContext.FunctionError != "Unhandled" || rec.ResponseContext.ExecutedVersion != "$LATEST" || rec.Version != "1.0" {
		t.Errorf("contexts: %+v", rec)
	}
	b := rec.DDBStreamBatchInfo
	if b.ShardID != "shardId-00000001" || b.StartSequenceNumber != s1 || b.EndSequenceNumber != s2 || b.BatchSize != 2 || b.StreamArn != streamArn || b.ApproximateArrivalOfFirstRecord == "" {
		t.Errorf("DDBStreamBatchInfo: %+v", b)
	}
	out, err := f.client.GetEventSourceMapping(context.Background(), &lambda.GetEventSourceMappingInput{UUID: aws.String(id)})
	if err != nil || aws.ToString(out.LastProcessingResult) != esm.ResultFunctionFailed {
		t.Errorf("LastProcessingResult = %q (%v)", aws.ToString(out.LastProcessingResult), err)
	}
}

func TestRecordAgeExceeded(t *testing.T) {
	f := newFixture(t)
	old := f.stream.put("P", "old", time.Now().Add(-2*time.Minute))
	fresh := f.stream.put("P", "fresh", time.Now())
	id := f.create(t, &lambda.CreateEventSourceMappingInput{
		MaximumRecordAgeInSeconds: aws.Int32(60),
		DestinationConfig:         &types.DestinationConfig{OnFailure: &types.OnFailure{Destination: aws.String(queueArn)}},
	})
	f.waitCheckpoint(t, id, fresh)
	if got := f.fns.delivered(); !slices.Equal(got, []string{fresh}) {
		t.Errorf("delivered %v", got)
	}
	msgs := f.queues.messages()
	var rec esm.OnFailureRecord
	if len(msgs) != 1 || json.Unmarshal([]byte(msgs[0]), &rec) != nil || rec.RequestContext.Condition != "RecordAgeExceeded" || rec.DDBStreamBatchInfo.StartSequenceNumber != old {
		t.Errorf("on-failure: %v", msgs)
	}
}

func TestTrimmedRecordsAreSkippedAfterPause(t *testing.T) {
	f := newFixture(t)
	s1 := f.stream.put("P", "1", time.Now())
	id := f.create(t, &lambda.CreateEventSourceMappingInput{})
	f.waitCheckpoint(t, id, s1)
	if !f.svc.Pause(id) {
		t.Fatal("pause")
	}
	lost := f.stream.put("P", "2", time.Now())
	f.stream.trimAll()
	s3 := f.stream.put("P", "3", time.Now())
	if !f.svc.Resume(id) {
		t.Fatal("resume")
	}
	f.waitCheckpoint(t, id, s3)
	got := f.fns.delivered()
	if !slices.Equal(got, []string{s1, s3}) {
		t.Errorf("delivered %v, want %v (record %s trimmed)", got, []string{s1, s3}, lost)
	}
	if st := f.status(t, id); st.Counters.RecordsTrimmed == 0 {
		t.Error("no trim counted")
	}
}

func TestDisableKeepsTheCheckpoint(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s1 := f.stream.put("P", "1", time.Now())
	id := f.create(t, &lambda.CreateEventSourceMappingInput{})
	f.waitCheckpoint(t, id, s1)
	if _, err := f.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(id), Enabled: aws.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	f.waitState(t, id, "Disabled")
	s2 := f.stream.put("P", "2", time.Now())
	eventually(t, 5*time.Second, func() bool { return !f.status(t, id).Polling }, func() string { return "still polling" })
	if got := f.fns.delivered(); !slices.Equal(got, []string{s1}) {
		t.Fatalf("delivered while disabled: %v", got)
	}
	if _, err := f.client.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(id), Enabled: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	f.waitCheckpoint(t, id, s2)
	if got := f.fns.delivered(); !slices.Equal(got, []string{s1, s2}) {
		t.Errorf("delivered %v", got)
	}
}

func TestLatestSkipsExistingRecords(t *testing.T) {
	f := newFixture(t)
	f.stream.put("P", "before", time.Now())
	id := f.create(t, &lambda.CreateEventSourceMappingInput{StartingPosition: types.EventSourcePositionLatest})
	eventually(t, 5*time.Second, func() bool { return f.status(t, id).Counters.Polls > 2 }, func() string { return "not polling" })
	after := f.stream.put("P", "after", time.Now())
	f.waitCheckpoint(t, id, after)
	if got := f.fns.delivered(); !slices.Equal(got, []string{after}) {
		t.Errorf("delivered %v", got)
	}
}

func TestDeletedFunctionStopsInvocations(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, &lambda.CreateEventSourceMappingInput{})
	f.fns.setExists(false)
	f.stream.put("P", "1", time.Now())
	eventually(t, 5*time.Second, func() bool {
		out, err := f.client.GetEventSourceMapping(context.Background(), &lambda.GetEventSourceMappingInput{UUID: aws.String(id)})
		return err == nil && aws.ToString(out.LastProcessingResult) == esm.ResultFunctionNotFound
	}, func() string { return "LastProcessingResult not reporting the missing function" })
	if n := len(f.fns.invocations()); n != 0 {
		t.Errorf("%d invocations of a deleted function", n)
	}
}

func TestExecutionRoleIsCheckedWhilePolling(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, &lambda.CreateEventSourceMappingInput{})
	f.auth.mu.Lock()
	f.auth.deny["dynamodb:GetRecords"] = true
	f.auth.mu.Unlock()
	f.stream.put("P", "1", time.Now())
	eventually(t, 5*time.Second, func() bool { return f.status(t, id).LastProcessingResult == esm.ResultStreamAccess }, func() string { return f.status(t, id).LastProcessingResult })
	if n := len(f.fns.invocations()); n != 0 {
		t.Errorf("%d invocations without read access", n)
	}
}

func TestParallelizationKeepsPartitionKeyOrder(t *testing.T) {
	f := newFixture(t)
	var last string
	for i := range 60 {
		last = f.stream.put(fmt.Sprintf("K%d", i%6), fmt.Sprintf("%03d", i), time.Now())
	}
	inFlight, maxInFlight := 0, 0
	f.fns.setHandler(func(ev events.DynamoDBEvent) ([]byte, string, error) {
		f.fns.mu.Lock()
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		f.fns.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		f.fns.mu.Lock()
		inFlight--
		f.fns.mu.Unlock()
		return nil, "", nil
	})
	id := f.create(t, &lambda.CreateEventSourceMappingInput{ParallelizationFactor: aws.Int32(3), BatchSize: aws.Int32(5)})
	f.waitCheckpoint(t, id, last)
	perKey := map[string][]string{}
	for _, inv := range f.fns.invocations() {
		for _, r := range inv.event.Records {
			pk := r.Change.Keys["PK"].String()
			perKey[pk] = append(perKey[pk], r.Change.SequenceNumber)
		}
	}
	for k, s := range perKey {
		if !slices.IsSorted(s) {
			t.Errorf("key %s out of order: %v", k, s)
		}
	}
	f.fns.mu.Lock()
	defer f.fns.mu.Unlock()
	if maxInFlight < 2 {
		t.Errorf("max concurrent batches = %d with ParallelizationFactor 3", maxInFlight)
	}
}

func TestControlPauseStopsInvocations(t *testing.T) {
	f := newFixture(t)
	id := f.create(t, &lambda.CreateEventSourceMappingInput{})
	f.svc.Pause(id)
	s := f.stream.put("P", "1", time.Now())
	reads := f.stream.readCount()
	time.Sleep(0)
	eventually(t, 5*time.Second, func() bool { return f.status(t, id).Paused }, func() string { return "not paused" })
	if f.stream.readCount() > reads+1 {
		t.Errorf("paused poller kept reading")
	}
	if len(f.fns.invocations()) != 0 {
		t.Error("paused mapping invoked the function")
	}
	out, _ := f.client.GetEventSourceMapping(context.Background(), &lambda.GetEventSourceMappingInput{UUID: aws.String(id)})
	if aws.ToString(out.State) != "Enabled" {
		t.Errorf("pause changed the state to %s", aws.ToString(out.State))
	}
	f.svc.Resume(id)
	f.waitCheckpoint(t, id, s)
	if f.svc.Pause("nope") {
		t.Error("pausing an unknown mapping succeeded")
	}
	_ = errors.New
}

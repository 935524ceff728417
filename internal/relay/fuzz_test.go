package relay_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// FuzzHandle feeds the handler arbitrary payloads, most of them stream
// batches with garbage records: the relay must never panic, and a stream
// batch may only report failures of its own records' sequence numbers.
// `go test` runs the seeds; `go test -fuzz FuzzHandle ./internal/relay`
// searches further.
func FuzzHandle(f *testing.F) {
	table := layouts["dedicated"]
	fake := relaytest.New(f, table)
	r := newRelay(f, testConfig(table, config.TargetEventBridge, config.ActionMark), fake, retryingAt(func() time.Time { return now }))
	good := relaytest.Records(table, 2, 32)
	wrongTypes := table.Item(good[1])
	wrongTypes[outbox.AttrDetail] = &types.AttributeValueMemberN{Value: "1"}
	wrongTypes[outbox.AttrOccurredAt] = &types.AttributeValueMemberBOOL{Value: true}
	seeds := [][]byte{
		relaytest.StreamJSON(table,
			relaytest.StreamRecord{NewImage: table.Item(good[0])},
			relaytest.StreamRecord{NewImage: wrongTypes},
			relaytest.StreamRecord{Keys: table.Key(good[1])},
			relaytest.StreamRecord{EventName: "REMOVE", OldImage: table.Item(good[0])},
		),
		[]byte(`{"Records":[{"eventName":"INSERT","dynamodb":{"NewImage":{"SK":{"S":"OUTBOX#x"},"detail":{"M":{}}},"SequenceNumber":"1"}}]}`),
		[]byte(`{"Records":[{"eventName":"INSERT","dynamodb":{"Keys":{"SK":{"NULL":true}},"SequenceNumber":""}}]}`),
		[]byte(`{"Records":[{"dynamodb":null},{}]}`),
		[]byte(`{"Records":[]}`),
		[]byte(`{"action":"reconcile","minAgeSeconds":-1}`),
		[]byte(`{"action":"nap"}`),
		[]byte(`[1,2,3]`),
		[]byte(`null`),
		[]byte(``),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := r.Handle(ctx, payload)
		resp, ok := out.(events.DynamoDBEventResponse)
		if err != nil || !ok {
			return
		}
		var batch events.DynamoDBEvent
		if json.Unmarshal(payload, &batch) != nil {
			t.Fatalf("a response %+v for a payload that is not a stream batch", resp)
		}
		var seqs []string
		for _, rec := range batch.Records {
			seqs = append(seqs, rec.Change.SequenceNumber)
		}
		for _, f := range resp.BatchItemFailures {
			if f.ItemIdentifier == "" || !slices.Contains(seqs, f.ItemIdentifier) {
				t.Fatalf("failure %q is not a sequence number of the batch %v", f.ItemIdentifier, seqs)
			}
		}
	})
}

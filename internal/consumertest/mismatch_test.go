package consumertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
)

// wantMismatch fails unless err is the payload mismatch of id, with the
// stored and delivered hashes, and the handler did not run.
func wantMismatch(t *testing.T, path string, err error, ran int, stored, delivered string) {
	t.Helper()
	var m *consumer.PayloadMismatchError
	if !errors.Is(err, consumer.ErrPayloadMismatch) || !errors.As(err, &m) {
		t.Fatalf("%s: %v, want ErrPayloadMismatch", path, err)
	}
	if m.Stored != stored || m.Delivered != delivered {
		t.Errorf("%s: mismatch %+v, want stored %s, delivered %s", path, m, stored, delivered)
	}
	if ran != 0 {
		t.Errorf("%s: the handler ran %d times", path, ran)
	}
}

// A reused id with another payload is an error on every path: a duplicate
// of a completed event, of one in progress, of one whose lease expired
// (never a takeover), and of one whose attempt failed.
func TestPayloadMismatchOnEveryPath(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	original, other := hashOf(t, `{"total":42.5}`), hashOf(t, `{"total":4250}`)
	ctx := context.Background()
	ran := 0

	if _, err := in.Process(ctx, "01COMPLETED", original, effectOnce("01COMPLETED", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := in.Process(ctx, "01COMPLETED", other, effectOnce("01COMPLETED", &ran))
	wantMismatch(t, "completed", err, ran, original, other)

	_, err = in.Process(ctx, "01INPROGRESS", original, func(ctx context.Context, tx *consumer.Tx) error {
		_, err := in.Process(ctx, "01INPROGRESS", other, effectOnce("01INPROGRESS", &ran))
		wantMismatch(t, "in progress", err, ran, original, other)
		// Past the lease: the other payload still may not take over.
		e.clock.Advance(time.Minute + time.Millisecond)
		_, err = in.Process(ctx, "01INPROGRESS", other, effectOnce("01INPROGRESS", &ran))
		wantMismatch(t, "expired lease", err, ran, original, other)
		tx.Add(countEffect("01INPROGRESS"))
		return nil
	})
	if err != nil {
		t.Fatalf("the holder, whose lease nobody took: %v", err)
	}

	boom := errors.New("boom")
	if _, err := in.Process(ctx, "01FAILED", original, func(context.Context, *consumer.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	_, err = in.Process(ctx, "01FAILED", other, effectOnce("01FAILED", &ran))
	wantMismatch(t, "released", err, ran, original, other)

	for _, id := range []string{"01COMPLETED", "01INPROGRESS"} {
		if n := e.applied(id); n != 1 {
			t.Errorf("%s: effect applied %d times, want 1", id, n)
		}
	}
	wantTotal(t, in, consumer.PayloadMismatches, 4)
}

// powertools-lambda-typescript#2058 and powertools-lambda-java#2260: a
// put-first check that fails on its condition returns the existing entry
// (ReturnValuesOnConditionCheckFailure ALL_OLD) instead of reading it, and
// the payload was not validated on that path. Here the entry comes back in
// the one PutItem, with no read, and it is validated.
func TestPutFirstConditionFailureValidatesThePayload(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	original, other := hashOf(t, `{"customerAccounts":["12345"]}`), hashOf(t, `{"customerAccounts":["54321"]}`)
	if _, err := in.Process(context.Background(), "01PUTFIRST", original, effectOnce("01PUTFIRST", nil)); err != nil {
		t.Fatal(err)
	}
	puts, gets := e.puts.Load(), e.gets.Load()
	ran := 0
	_, err := in.Process(context.Background(), "01PUTFIRST", other, effectOnce("01PUTFIRST", &ran))
	wantMismatch(t, "put first", err, ran, original, other)
	if e.puts.Load()-puts != 1 || e.gets.Load() != gets {
		t.Errorf("the duplicate took %d puts and %d reads, want one put and no read", e.puts.Load()-puts, e.gets.Load()-gets)
	}
}

// powertools-lambda-python#3821: a record must be kept (cached) only after
// its payload was validated. The kit keeps no cache; what a mismatch leaves
// behind is the entry as it was: the mismatching payload stays a mismatch
// on every later delivery, and the original stays a duplicate.
func TestMismatchLeavesTheEntryAsItWas(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	original, other := hashOf(t, `{"a":1}`), hashOf(t, `{"a":2}`)
	ctx := context.Background()
	if _, err := in.Process(ctx, "01KEPT", original, effectOnce("01KEPT", nil)); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for range 2 {
		_, err := in.Process(ctx, "01KEPT", other, effectOnce("01KEPT", &ran))
		wantMismatch(t, "again", err, ran, original, other)
	}
	if got := attrS(e.entry("01KEPT"), consumer.AttrPayloadHash); got != original {
		t.Errorf("stored hash %s after mismatches, want %s", got, original)
	}
	if out, err := in.Process(ctx, "01KEPT", original, effectOnce("01KEPT", &ran)); err != nil || out != consumer.Duplicate || ran != 0 {
		t.Errorf("the original after mismatches: %v, %v, ran %d", out, err, ran)
	}
}

// The log records of a payload mismatch are the ones the inbox contract
// guide documents: through HandleSQS, the inbox's ERROR "payload mismatch"
// with eventId, status, storedHash and deliveredHash, then the adapter's
// WARN "delivery failed" with the message's deliveryId and the error, and
// no other record for the delivery.
func TestPayloadMismatchLogRecords(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	var log bytes.Buffer
	c, err := consumer.New(e.inbox(consumer.WithLogger(consumer.NewLogger(&log, nil))),
		func(context.Context, consumer.Event[orderPlaced], *consumer.Tx) error { return nil }, consumer.WithMetricsWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	const queue = "arn:aws:sqs:us-east-1:123456789012:billing"
	first, reused := record("01REUSED", `{"orderId":"1","total":42.5}`), record("01REUSED", `{"orderId":"1","total":4250}`)
	if _, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{sqsMessage("m-1", eventBridgeBody(first), queue, "")}}); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{sqsMessage("m-2", eventBridgeBody(reused), queue, "")}})
	if err != nil || !slices.Equal(failedIDs(resp), []string{"m-2"}) {
		t.Fatalf("the reused id: %v, %v; want m-2 failed", failedIDs(resp), err)
	}
	var lines []map[string]any
	for l := range strings.Lines(log.String()) {
		var line map[string]any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, line)
	}
	stored, delivered := hashOf(t, `{"orderId":"1","total":42.5}`), hashOf(t, `{"orderId":"1","total":4250}`)
	want := []map[string]any{
		{"level": "ERROR", "msg": "payload mismatch", "eventId": "01REUSED", "status": "COMPLETED", "storedHash": stored, "deliveredHash": delivered},
		{"level": "WARN", "msg": "delivery failed", "deliveryId": "m-2"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d log records, want %d:\n%s", len(lines), len(want), log.String())
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("record %d: %s = %v, want %v", i, k, lines[i][k], v)
			}
		}
	}
	if msg := fmt.Sprint(lines[1]["error"]); !strings.Contains(msg, "01REUSED") || !strings.Contains(msg, stored) || !strings.Contains(msg, delivered) {
		t.Errorf("the delivery's error %q does not name the event and both hashes", msg)
	}
}

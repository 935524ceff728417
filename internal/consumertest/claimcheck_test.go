package consumertest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// blob is an event's data of about n bytes.
func blob(n int) json.RawMessage {
	return json.RawMessage(`{"blob":"` + strings.Repeat("x", max(0, n-11)) + `"}`)
}

// TestClaimCheckFromWriterToConsumer: events from a few bytes to 10 MiB
// are written (the large ones with their data in S3), published in either
// envelope (their objects then tagged published) and applied with their
// data whole and hash-checked; an object changed after writing is refused,
// never applied.
func TestClaimCheckFromWriterToConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := outbox.Table{Name: "orders"}.WithDefaults()
	_, objects, ddb := relaytest.ClaimCheckStack(ctx, t, "claims", table)
	w, err := outbox.NewWriter(ddb, table, outbox.WithClaimCheck(objects, "claims"))
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{11, 200 << 10, 300 << 10, 1 << 20, outbox.MaxClaimBytes}
	var written []outbox.Record
	for _, n := range sizes {
		rs, err := w.Write(ctx, nil, outbox.Event{Source: "com.example.files", DetailType: "FileStored", Detail: blob(n)})
		if err != nil {
			t.Fatalf("writing %d bytes: %v", n, err)
		}
		written = append(written, rs[0])
	}
	if _, err := w.Write(ctx, nil, outbox.Event{Source: "s", DetailType: "d", Detail: blob(outbox.MaxClaimBytes + 1)}); !errors.Is(err, outbox.ErrEventTooLarge) {
		t.Errorf("an event over 10 MiB: %v, want ErrEventTooLarge", err)
	}
	stored := readBack(ctx, t, ddb, table, written)
	for i, r := range stored {
		if large := i >= 2; (r.DataRef != nil) != large {
			t.Errorf("the event of %d bytes has DataRef %+v", sizes[i], r.DataRef)
		}
	}
	for _, f := range outbox.Formats {
		applied := consumeClaims(ctx, t, objects, stored, f)
		for i, r := range written {
			if got := applied[r.EventID]; got != sha256.Sum256(blob(sizes[i])) {
				t.Errorf("%s: the event of %d bytes was applied with other data", f, sizes[i])
			}
		}
	}
	for _, r := range stored[2:] {
		tags, err := objects.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("claims"), Key: aws.String(r.DataRef.Key)})
		if err != nil || len(tags.TagSet) != 1 || *tags.TagSet[0].Key != outbox.ClaimStateTag || *tags.TagSet[0].Value != outbox.ClaimStatePublished {
			t.Errorf("the published event's object %s has the tags %+v, %v", r.DataRef.Key, tags, err)
		}
	}
	tampered := stored[3]
	if _, err := objects.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("claims"), Key: aws.String(tampered.DataRef.Key), Body: bytes.NewReader(blob(10))}); err != nil {
		t.Fatal(err)
	}
	if applied := consumeClaims(ctx, t, objects, []outbox.Record{tampered}, outbox.FormatOutbox); len(applied) != 0 {
		t.Errorf("an event whose object was changed was applied")
	}
}

// readBack reads the written records as the relay does, from their items.
func readBack(ctx context.Context, t *testing.T, ddb *dynamodb.Client, table outbox.Table, written []outbox.Record) []outbox.Record {
	t.Helper()
	var out []outbox.Record
	for _, r := range written {
		item, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table.Name), Key: table.Key(r), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := table.ParseItem(item.Item)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parsed)
	}
	return out
}

// consumeClaims publishes the records to a new queue (of a stack of its
// own) in format f and applies them with a consumer that fetches claim-checked data; it returns
// the hash of the data each applied event had.
func consumeClaims(ctx context.Context, t *testing.T, objects *s3.Client, records []outbox.Record, f outbox.Format) map[string][32]byte {
	t.Helper()
	d := newDeliveries(t)
	e := d.engine(ctx)
	q := d.targetQueue(fmt.Sprintf("claims-%s-%d", f, len(records)), f, targetkind.PublisherOptions{Objects: objects})
	q.publish(ctx, records)
	applied := map[string][32]byte{}
	c, err := consumer.New(e.inbox(), func(_ context.Context, ev consumer.Event[map[string]any], _ *consumer.Tx) error {
		applied[ev.ID] = sha256.Sum256(ev.RawData)
		return nil
	}, consumer.WithObjectStore(objects), consumer.WithMetricsWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.HandleSQS(ctx, q.receive(len(records)))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures)+len(applied) != len(records) {
		t.Errorf("%d applied and %d failed of %d", len(applied), len(resp.BatchItemFailures), len(records))
	}
	return applied
}

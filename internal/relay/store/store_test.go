package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

var noSleep = retry.Policy{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}

func TestDeleteChunksAndDuplicates(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	fake := relaytest.New(t, table)
	records := relaytest.Records(table, 51, 16)
	fake.PutRecords(records)
	// The same record twice (redelivered), which BatchWriteItem would refuse
	// within one call.
	batch := append(append([]outbox.Record{}, records...), records[3])
	s := &store.Store{Client: fake, Table: table, Retry: noSleep}
	errs := s.Delete(context.Background(), batch)
	for i, err := range errs {
		if err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if got := fake.Calls(relaytest.OpBatchWriteItem); got != 3 {
		t.Errorf("%d calls for 51 items, want 3", got)
	}
	for i, r := range records {
		if fake.Item(r.PartitionKey, r.SortKey) != nil {
			t.Errorf("record %d not deleted", i)
		}
	}
}

func TestDeleteCallError(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	fake := relaytest.New(t, table)
	fake.CallError = func(op string, n int) error {
		if n == 1 {
			return &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
		}
		return nil
	}
	records := relaytest.Records(table, 30, 16)
	s := &store.Store{Client: fake, Table: table, Retry: noSleep, Concurrency: 1}
	errs := s.Delete(context.Background(), records)
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDeniedException" {
				t.Errorf("error %v does not wrap the API error", err)
			}
		}
	}
	if failed != 25 {
		t.Errorf("%d failed, want the 25 of the first call", failed)
	}
}

func TestMarkFailedReason(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	fake := relaytest.New(t, table)
	r := relaytest.Records(table, 1, 16)[0]
	fake.PutRecord(r)
	long := string(make([]byte, 5000))
	s := &store.Store{Client: fake, Table: table, Retry: noSleep}
	if err := s.MarkFailed(context.Background(), []outbox.Record{r}, []string{long})[0]; err != nil {
		t.Fatal(err)
	}
	if fake.Status(r) != string(outbox.StatusFailed) {
		t.Errorf("status %s", fake.Status(r))
	}
	if e := fake.Item(r.PartitionKey, r.SortKey)[outbox.AttrLastError].(*types.AttributeValueMemberS).Value; len(e) > 1024 {
		t.Errorf("lastError of %d bytes stored", len(e))
	}
	// Marking again: already failed, not an error.
	if err := s.MarkFailed(context.Background(), []outbox.Record{r}, []string{"again"})[0]; err != nil {
		t.Errorf("second mark: %v", err)
	}
	if err := s.MarkPublished(context.Background(), []outbox.Record{r})[0]; err != nil {
		t.Errorf("mark published of a FAILED item: %v", err)
	}
	if fake.Status(r) != string(outbox.StatusFailed) {
		t.Errorf("status %s, want FAILED kept", fake.Status(r))
	}
}

// TestMarkFailedMalformed marks FAILED the items a reconcile finds
// malformed, whatever their status, so that they leave the pending index.
func TestMarkFailedMalformed(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	fake := relaytest.New(t, table)
	records := relaytest.Records(table, 3, 16)
	for i, r := range records {
		item := table.Item(r)
		switch i {
		case 0:
			delete(item, outbox.AttrStatus)
		case 1:
			item[outbox.AttrStatus] = &types.AttributeValueMemberS{Value: "SENT"}
		}
		fake.Put(item)
	}
	s := &store.Store{Client: fake, Table: table, Retry: noSleep}
	for i, err := range s.MarkFailed(context.Background(), records, []string{"no status", "bad status", "bad detail"}) {
		if err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	for i, r := range records {
		item := fake.Item(r.PartitionKey, r.SortKey)
		if got := fake.Status(r); got != string(outbox.StatusFailed) {
			t.Errorf("record %d: status %q, want FAILED", i, got)
		}
		if _, ok := item[outbox.AttrPendingShard]; ok {
			t.Errorf("record %d: still in the pending index", i)
		}
	}
}

// TestCurrent: 250 records (one twice) are read in 3 parallel calls of at
// most 100 keys; unprocessed keys are read again; a gone item is nil; a key
// never processed gets an error.
func TestCurrent(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	fake := relaytest.New(t, table)
	records := relaytest.Records(table, 250, 16)
	fake.PutRecords(records[:249]) // the last one is gone
	fake.UnprocessedRead = func(sk string, attempt int) bool {
		switch sk {
		case records[5].SortKey, records[150].SortKey:
			return attempt == 1
		case records[200].SortKey:
			return true
		}
		return false
	}
	s := &store.Store{Client: fake, Table: table, Retry: noSleep}
	batch := append(append([]outbox.Record{}, records...), records[7])
	items, errs := s.Current(context.Background(), batch)
	for i := range batch {
		switch i {
		case 200:
			if errs[i] == nil {
				t.Errorf("record 200: no error for a key never processed")
			}
		case 249:
			if items[i] != nil || errs[i] != nil {
				t.Errorf("gone record: %v, %v", items[i], errs[i])
			}
		default:
			sk, _ := items[i][table.SortKey].(*types.AttributeValueMemberS)
			if errs[i] != nil || sk == nil || sk.Value != batch[i].SortKey {
				t.Errorf("record %d: %v, %v", i, items[i][table.SortKey], errs[i])
			}
		}
	}
	// 3 calls, then retries of the unprocessed keys (at most 2 more rounds
	// of the calls that had some).
	if got := fake.Calls(relaytest.OpBatchGetItem); got < 3 || got > 3+2+2 {
		t.Errorf("%d BatchGetItem calls", got)
	}
}

// TestHoldUntilWithin: a first hold ends at the invocation's deadline when
// that comes before the policy's hold, and so does every hold of an ordered
// event; later holds of an unordered event, the backoff, and holds without
// a deadline are the policy's.
func TestHoldUntilWithin(t *testing.T) {
	t.Parallel()
	at := time.Unix(1000, 0)
	p := store.HoldPolicy{}
	ctx, cancel := context.WithDeadline(context.Background(), at.Add(30*time.Second))
	defer cancel()
	tests := []struct {
		ctx      context.Context
		attempts int
		sequence int64
		want     time.Duration
	}{
		{ctx, 0, 0, 30 * time.Second},
		{ctx, 1, 0, 2 * time.Minute},
		{ctx, 3, 7, 30 * time.Second},
		{context.Background(), 0, 0, time.Minute},
		{context.Background(), 3, 7, 8 * time.Minute},
	}
	for _, tt := range tests {
		r := outbox.Record{Attempts: tt.attempts, Sequence: tt.sequence}
		if got := p.UntilWithin(tt.ctx, at, r).Sub(at); got != tt.want {
			t.Errorf("attempts=%d sequence=%d: hold of %s, want %s", tt.attempts, tt.sequence, got, tt.want)
		}
		if got := p.Within(tt.ctx, at)(r).Sub(at); got != tt.want {
			t.Errorf("Within, attempts=%d sequence=%d: hold of %s, want %s", tt.attempts, tt.sequence, got, tt.want)
		}
	}
	long, cancelLong := context.WithDeadline(context.Background(), at.Add(time.Hour))
	defer cancelLong()
	if got := p.UntilWithin(long, at, outbox.Record{}).Sub(at); got != time.Minute {
		t.Errorf("hold of %s before a distant deadline, want the policy's minute", got)
	}
}

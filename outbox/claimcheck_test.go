package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

type putRecorder struct {
	puts []*s3.PutObjectInput
	err  error
}

func (p *putRecorder) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	p.puts = append(p.puts, in)
	return &s3.PutObjectOutput{}, p.err
}

func largeEvent() outbox.Event {
	e := orderPlaced()
	e.Detail = json.RawMessage(`{"blob":"` + strings.Repeat("x", outbox.MaxEntryBytes) + `"}`)
	return e
}

// TestWriteClaimChecksLargeEvents: a large event's data goes to S3 first,
// encrypted with the KMS key given and with its SHA-256; the item holds the
// reference and no detail, and parses back to it; a small event stays
// whole.
func TestWriteClaimChecksLargeEvents(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}.WithDefaults()
	objects, c := &putRecorder{}, &recordingClient{}
	w, err := outbox.NewWriter(c, table, outbox.WithClaimCheck(objects, "claims", outbox.WithClaimKMSKey("arn:aws:kms:us-east-1:123456789012:key/k")))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := w.Write(context.Background(), nil, largeEvent(), orderPlaced())
	if err != nil {
		t.Fatal(err)
	}
	if len(objects.puts) != 1 || *objects.puts[0].Key != "outbox/"+rs[0].EventID || objects.puts[0].ServerSideEncryption != s3types.ServerSideEncryptionAwsKms ||
		objects.puts[0].ChecksumSHA256 == nil || objects.puts[0].Metadata[outbox.ClaimMetaPartitionKey] != "ORDER%231234" {
		t.Fatalf("puts %+v", objects.puts)
	}
	large, small := c.calls[0].TransactItems[0].Put.Item, c.calls[0].TransactItems[1].Put.Item
	if _, ok := large[outbox.AttrDetail]; ok {
		t.Error("the claim-checked item keeps its detail")
	}
	if _, ok := small[outbox.AttrDataRef]; ok {
		t.Error("a small event was claim-checked")
	}
	r, err := table.ParseItem(large)
	if err != nil || r.DataRef == nil || *r.DataRef != *rs[0].DataRef || r.DataRef.Size != int64(len(largeEvent().Detail)) {
		t.Fatalf("parsed %+v, %v; written %+v", r.DataRef, err, rs[0].DataRef)
	}
	var published outbox.PublishedDetail
	if err := json.Unmarshal(r.DetailJSON(), &published); err != nil || published.Data != nil || published.Metadata.DataRef.URI != "s3://claims/outbox/"+r.EventID {
		t.Errorf("published %s", r.DetailJSON())
	}
}

// TestClaimCheckFailureWritesNothing: when S3 refuses the data, no
// transaction is sent; without a claim check, Put refuses a large event and
// names the way out.
func TestClaimCheckFailureWritesNothing(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}
	c := &recordingClient{}
	w, err := outbox.NewWriter(c, table, outbox.WithClaimCheck(&putRecorder{err: errors.New("AccessDenied")}, "claims"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(context.Background(), nil, largeEvent()); err == nil || len(c.calls) != 0 {
		t.Errorf("Write = %v with %d transactions", err, len(c.calls))
	}
	_, _, err = w.Put(largeEvent())
	if !errors.Is(err, outbox.ErrEventTooLarge) || !strings.Contains(err.Error(), "WithClaimCheck") {
		t.Errorf("Put of a large event = %v", err)
	}
}

// TestInlineIsTheEventWrittenWhole: a claim-checked record given its
// object's data publishes, in every format and on every kind, exactly as
// the same event written whole, and measures the same; data of another
// size or hash is refused with ErrDataMismatch, as is a record with no
// reference.
func TestInlineIsTheEventWrittenWhole(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}.WithDefaults()
	objects, c := &putRecorder{}, &recordingClient{}
	w, err := outbox.NewWriter(c, table, outbox.WithClaimCheck(objects, "claims"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := w.Write(context.Background(), nil, largeEvent())
	if err != nil || rs[0].DataRef == nil {
		t.Fatalf("written %+v, %v; want a claim-checked event", rs, err)
	}
	data := []byte(largeEvent().Detail)
	whole := rs[0]
	whole.DataRef, whole.Detail = nil, data
	inline, err := rs[0].Inline(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range outbox.Formats {
		if string(inline.MessageIn(f)) != string(whole.MessageIn(f)) || string(inline.DetailIn(f)) != string(whole.DetailIn(f)) {
			t.Errorf("%s: the inline record publishes otherwise than the event written whole", f)
		}
	}
	for target := range outbox.TargetLimits {
		if inline.PublishedSizeOn(target) != whole.PublishedSizeOn(target) || inline.PublishedSizeOn(target) <= rs[0].PublishedSizeOn(target) {
			t.Errorf("%s: inline %d bytes, whole %d, reference %d", target, inline.PublishedSizeOn(target), whole.PublishedSizeOn(target), rs[0].PublishedSizeOn(target))
		}
	}
	other := []byte(strings.Replace(string(data), "x", "y", 1))
	for name, d := range map[string][]byte{"other bytes": other, "fewer bytes": data[:len(data)-1], "more bytes": append([]byte(" "), data...)} {
		if _, err := rs[0].Inline(d); !errors.Is(err, outbox.ErrDataMismatch) {
			t.Errorf("%s: %v, want ErrDataMismatch", name, err)
		}
	}
	if _, err := whole.Inline(data); !errors.Is(err, outbox.ErrDataMismatch) {
		t.Errorf("a record without a reference: %v, want ErrDataMismatch", err)
	}
}

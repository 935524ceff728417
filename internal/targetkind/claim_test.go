package targetkind

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// fakeObjects is a claim-check bucket in memory: it serves the objects of
// data, failing the first getFailures reads of each with getCode, and the
// first tagFailures taggings of each with tagCode.
type fakeObjects struct {
	data                     map[string][]byte
	getCode, tagCode         string
	getFailures, tagFailures int

	mu         sync.Mutex
	gets, tags map[string]int
}

func newFakeObjects() *fakeObjects {
	return &fakeObjects{data: map[string][]byte{}, gets: map[string]int{}, tags: map[string]int{}}
}

func (f *fakeObjects) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets[*in.Key]++
	if f.gets[*in.Key] <= f.getFailures {
		return nil, &smithy.GenericAPIError{Code: f.getCode, Message: "chaos"}
	}
	data, ok := f.data[*in.Key]
	if !ok {
		return nil, &smithy.GenericAPIError{Code: "NoSuchKey", Message: "The specified key does not exist."}
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(data))}, nil
}

func (f *fakeObjects) PutObjectTagging(_ context.Context, in *s3.PutObjectTaggingInput, _ ...func(*s3.Options)) (*s3.PutObjectTaggingOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tags[*in.Key]++
	if f.tags[*in.Key] <= f.tagFailures {
		return nil, &smithy.GenericAPIError{Code: f.tagCode, Message: "chaos"}
	}
	return &s3.PutObjectTaggingOutput{}, nil
}

// claimChecked returns r as the writer stores it with a claim check: its
// data in objects, its item with the reference.
func claimChecked(objects *fakeObjects, r outbox.Record) outbox.Record {
	sum := sha256.Sum256(r.Detail)
	r.DataRef = &outbox.DataRef{Bucket: "claims", Key: outbox.ClaimObjectPrefix + r.EventID, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(r.Detail))}
	objects.data[r.DataRef.Key] = r.Detail
	r.Detail = nil
	return r
}

// dataOf is a JSON object of about n bytes.
func dataOf(n int) string { return `{"blob":"` + strings.Repeat("x", n) + `"}` }

// kindBodies publishes records to a fake of s's kind and returns the
// results and what the target received: each message body, or each
// EventBridge entry's detail.
func kindBodies(t *testing.T, s Settings, objects ObjectStore, records []outbox.Record) ([]publish.Result, []string) {
	t.Helper()
	var client any
	var bodies func() []string
	if s.Type == EventBridge {
		c := &capturingEventBridge{}
		client, bodies = c, func() []string { return c.details }
	} else {
		f := &fakeBatchTarget{}
		client, bodies = f, func() []string {
			var out []string
			for _, m := range f.accepted {
				out = append(out, m.body)
			}
			return out
		}
	}
	p, err := NewPublisher(aws.Config{}, s, PublisherOptions{Retry: noWait, Client: client, Objects: objects, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	results := p.Publish(context.Background(), records)
	return results, bodies()
}

// TestClaimCheckedEventsInlineWhenTheyFit: a claim-checked event of 300
// KiB reaches EventBridge and SQS (1 MiB) with its data inline, exactly as
// the same event written whole, in every envelope, and SNS (256 KiB) as
// its reference; its object is tagged published either way.
func TestClaimCheckedEventsInlineWhenTheyFit(t *testing.T) {
	t.Parallel()
	whole := aggregateRecords([]string{"order-1"}, 1, dataOf(300*1024))[0]
	for _, k := range Kinds() {
		for _, f := range outbox.Formats {
			s := samples[k.Type()]
			s.Envelope = f
			objects := newFakeObjects()
			claimed := claimChecked(objects, whole)
			results, got := kindBodies(t, s, objects, []outbox.Record{claimed})
			_, want := kindBodies(t, s, nil, []outbox.Record{whole})
			inline := whole.PublishedSizeOn(string(k.Type())) <= k.Limits().MessageBytes
			if results[0].Status != publish.Published || len(got) != 1 || objects.tags[claimed.DataRef.Key] != 1 {
				t.Fatalf("%s %s: %+v, %d bodies, tagged %d times; want it published once and tagged", k.Type(), f, results[0], len(got), objects.tags[claimed.DataRef.Key])
			}
			if inline && got[0] != want[0] {
				t.Errorf("%s %s: the claim-checked event was published as %.200s..., not as the same event written whole", k.Type(), f, got[0])
			}
			if hasRef := strings.Contains(strings.ToLower(got[0]), "dataref"); hasRef == inline || strings.Contains(got[0], "xxxxxxxx") == !inline {
				t.Errorf("%s %s (inline %v): published %.300s", k.Type(), f, inline, got[0])
			}
		}
	}
	if whole.PublishedSizeOn(outbox.TargetSNS) <= (snsKind{}).Limits().MessageBytes || whole.PublishedSizeOn(outbox.TargetSQS) > (sqsKind{}).Limits().MessageBytes {
		t.Fatal("the event does not fall between SNS's limit and SQS's")
	}
}

// TestClaimMismatchPublishesTheReference: an object that is not the data
// its reference describes (other bytes of the same size, or fewer bytes)
// is never published as the event's data: the reference is, for the
// consumer kit's check to report, and the object is tagged as for any
// published event.
func TestClaimMismatchPublishesTheReference(t *testing.T) {
	t.Parallel()
	whole := aggregateRecords([]string{"order-1"}, 1, `{"total":3}`)[0]
	for name, stored := range map[string]string{"other bytes": `{"total":4}`, "fewer bytes": `{"total":}`, "more bytes": `{"total":30}`} {
		objects := newFakeObjects()
		claimed := claimChecked(objects, whole)
		objects.data[claimed.DataRef.Key] = []byte(stored)
		results, got := kindBodies(t, samples[SQS], objects, []outbox.Record{claimed})
		if results[0].Status != publish.Published || len(got) != 1 || !strings.Contains(got[0], `"dataRef"`) || strings.Contains(got[0], `"total"`) {
			t.Errorf("%s: %+v, published %v; want the reference published", name, results[0], got)
		}
		if objects.gets[claimed.DataRef.Key] != 1 || objects.tags[claimed.DataRef.Key] != 1 {
			t.Errorf("%s: read %d times, tagged %d times; want once each", name, objects.gets[claimed.DataRef.Key], objects.tags[claimed.DataRef.Key])
		}
	}
}

// TestClaimReadFailureFailsTheEvent: an object S3 throttles is read on a
// later try and its event published inline; one it refuses to read
// (access, KMS, a missing object) fails its event, not published, with a
// hint naming s3:GetObject, so that it stays pending; the other events of
// the batch are published.
func TestClaimReadFailureFailsTheEvent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code      string
		failures  int
		want      publish.Status
		wantClass retry.Class
	}{
		{code: "SlowDown", failures: 2, want: publish.Published},
		{code: "InternalError", failures: noWait.Attempts, want: publish.Failed, wantClass: retry.ClassTransient},
		{code: "AccessDenied", failures: 1, want: publish.Failed, wantClass: retry.ClassEnvironment},
		{code: "KMS.DisabledException", failures: 1, want: publish.Failed, wantClass: retry.ClassEnvironment},
		{code: "NoSuchKey", failures: 1, want: publish.Failed, wantClass: retry.ClassEnvironment},
	} {
		objects := newFakeObjects()
		objects.getCode, objects.getFailures = c.code, c.failures
		rs := aggregateRecords([]string{"order-1", "order-2"}, 1, `{"total":3}`)
		claimed := claimChecked(objects, rs[0])
		results, got := kindBodies(t, samples[SQS], objects, []outbox.Record{claimed, rs[1]})
		res := results[0]
		if res.Status != c.want || res.Class != c.wantClass || results[1].Status != publish.Published {
			t.Errorf("%s failing %d times: %+v, other event %v; want %v (%q)", c.code, c.failures, res, results[1].Status, c.want, c.wantClass)
		}
		wantBodies, wantTags := 2, 1
		if c.want == publish.Failed {
			wantBodies, wantTags = 1, 0
			if !strings.Contains(res.Hint, "s3:GetObject on "+claimed.DataRef.URI()) || !strings.Contains(res.Reason, c.code) {
				t.Errorf("%s: reason %q, hint %q; want the error and s3:GetObject named", c.code, res.Reason, res.Hint)
			}
		}
		if len(got) != wantBodies || objects.tags[claimed.DataRef.Key] != wantTags {
			t.Errorf("%s failing %d times: %d messages, %d taggings; want %d and %d", c.code, c.failures, len(got), objects.tags[claimed.DataRef.Key], wantBodies, wantTags)
		}
	}
}

// TestClaimTaggingRetriesTransientErrors: a published event whose object
// S3 throttles is tagged on a later try, under the relay's policy, and
// stays published, instead of being published again; an error that
// retrying cannot mend fails the event at once, to be published again.
func TestClaimTaggingRetriesTransientErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code       string
		failures   int
		want       publish.Status
		wantCalls  int
		wantReason bool
	}{
		{code: "SlowDown", failures: 2, want: publish.Published, wantCalls: 3},
		{code: "SlowDown", failures: noWait.Attempts, want: publish.Failed, wantCalls: noWait.Attempts, wantReason: true},
		{code: "AccessDenied", failures: 1, want: publish.Failed, wantCalls: 1, wantReason: true},
	} {
		objects := newFakeObjects()
		objects.tagCode, objects.tagFailures = c.code, c.failures
		r := claimChecked(objects, aggregateRecords([]string{"order-1"}, 1, `{"total":3}`)[0])
		p := claimPublisher{Publisher: &SQSPublisher{Client: &fakeBatchTarget{}, QueueARN: testQueue, Retry: noWait},
			objects: func() ObjectStore { return objects }, retry: noWait, target: outbox.TargetSQS, limit: sqsKind{}.Limits().MessageBytes}
		res := p.Publish(context.Background(), []outbox.Record{r})[0]
		if res.Status != c.want || objects.tags[r.DataRef.Key] != c.wantCalls || (res.Reason != "") != c.wantReason {
			t.Errorf("%s failing %d times: %+v after %d taggings; want status %v after %d", c.code, c.failures, res, objects.tags[r.DataRef.Key], c.want, c.wantCalls)
		}
	}
}

// TestClaimInlineInParts: a batch whose data to read inline is over
// inlineBudget is published in parts, in order, each within the budget,
// every event inline; data too large to inline costs nothing.
func TestClaimInlineInParts(t *testing.T) {
	t.Parallel()
	p := claimPublisher{limit: sqsKind{}.Limits().MessageBytes}
	sized := func(sizes ...int64) []outbox.Record {
		var rs []outbox.Record
		for _, n := range sizes {
			rs = append(rs, outbox.Record{DataRef: &outbox.DataRef{Size: n}})
		}
		return append(rs, outbox.Record{})
	}
	const mib = 1 << 20
	for _, c := range []struct {
		records []outbox.Record
		want    int
	}{
		{sized(mib, mib, mib), 4},
		{sized(10*mib, 6*mib), 3}, // over the limit: never read
		{append(sized(mib, mib, mib, mib, mib, mib, mib, mib, mib, mib, mib, mib, mib, mib, mib, mib), sized(1)...), 17},
	} {
		if got := p.partLength(c.records); got != c.want {
			t.Errorf("part of %d records: %d, want %d", len(c.records), got, c.want)
		}
	}
	objects := newFakeObjects()
	var claimed []outbox.Record
	for _, r := range aggregateRecords([]string{"a", "b", "c", "d"}, 10, dataOf(600<<10)) {
		claimed = append(claimed, claimChecked(objects, r))
	}
	results, bodies := kindBodies(t, samples[SQS], objects, claimed)
	if len(bodies) != len(claimed) {
		t.Fatalf("%d messages, want %d", len(bodies), len(claimed))
	}
	for i, res := range results {
		if res.Status != publish.Published || strings.Contains(bodies[i], "dataRef") || !strings.Contains(bodies[i], claimed[i].EventID) {
			t.Errorf("event %d: %+v, message %.100s...; want it published inline, in order", i, res, bodies[i])
		}
	}
}

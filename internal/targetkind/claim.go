package targetkind

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// ObjectTagger is the part of the S3 client that marks a claim-checked
// event's object published.
type ObjectTagger interface {
	PutObjectTagging(ctx context.Context, in *s3.PutObjectTaggingInput, opts ...func(*s3.Options)) (*s3.PutObjectTaggingOutput, error)
}

// ObjectStore is the part of the S3 client the relay uses on claim-checked
// events' objects: it reads one to publish its data inline and tags it
// once its event is published. *s3.Client has it.
type ObjectStore interface {
	ObjectTagger
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// claimPublisher publishes claim-checked events and tags their objects.
//
// An event whose data, with the rest of its published form, fits the
// kind's message (outbox.Record.PublishedSizeOn, the Writer's measure) is
// published inline: its object is read, checked against the reference
// (size and SHA-256) and published as the data of an event written whole.
// A failed read (throttling, access denied, KMS, S3's errors, a missing
// object) fails the event, to be published later, like a failed publish;
// an object that is not the data its reference describes is never
// published as data: the reference is, as for an event too large to
// publish inline, and the consumer kit's own check reports the mismatch.
//
// It then tags the object of every claim-checked event it published,
// inline or not (outbox.ClaimStateTag), before the relay marks or deletes
// the item: from then on the bucket's lifecycle rule, not the sweep,
// removes it. A throttled or internally failed read or tagging is retried
// under the relay's policy. An event whose object still cannot be tagged
// is reported failed, to be published again (a duplicate the consumers
// drop), so that its item is never deleted while its object looks
// uncommitted.
type claimPublisher struct {
	publish.Publisher
	objects func() ObjectStore
	retry   retry.Policy
	// target is the kind's name, limit its message size (outbox.Limits).
	target string
	limit  int
}

func newClaimPublisher(p publish.Publisher, cfg aws.Config, k Kind, o PublisherOptions) claimPublisher {
	objects := func() ObjectStore { return s3.NewFromConfig(cfg) }
	if o.Objects != nil {
		objects = func() ObjectStore { return o.Objects }
	}
	return claimPublisher{Publisher: p, objects: objects, retry: o.Retry, target: string(k.Type()), limit: k.Limits().MessageBytes}
}

// inlineBudget bounds the data read to publish inline that one call
// holds at once: a stream batch of a hundred events of 1 MiB each is
// published in parts, one after the other, so that the relay's memory
// (256 MB by default) holds each part's data and its messages.
const inlineBudget = 16 << 20

// Publish implements publish.Publisher. Records are published in parts of
// at most inlineBudget bytes of data to read, in order; within a part the
// objects are read, and then tagged, in parallel.
func (p claimPublisher) Publish(ctx context.Context, records []outbox.Record) []publish.Result {
	results := make([]publish.Result, 0, len(records))
	for start := 0; start < len(records); {
		end := start + p.partLength(records[start:])
		results = append(results, p.publishPart(ctx, records[start:end])...)
		start = end
	}
	return results
}

// partLength is the number of records, at least one, from the first
// whose data to read fits inlineBudget.
func (p claimPublisher) partLength(records []outbox.Record) int {
	budget := int64(inlineBudget)
	for n, r := range records {
		if r.DataRef != nil && r.DataRef.Size <= int64(p.limit) {
			if budget -= r.DataRef.Size; budget < 0 && n > 0 {
				return n
			}
		}
	}
	return len(records)
}

// publishPart publishes records, reading and tagging their objects.
func (p claimPublisher) publishPart(ctx context.Context, records []outbox.Record) []publish.Result {
	claimed := claimedIndexes(records)
	if len(claimed) == 0 {
		return p.Publisher.Publish(ctx, records)
	}
	objects := p.objects()
	results := make([]publish.Result, len(records))
	sent := slices.Clone(records)
	unread := make([]bool, len(records))
	inParallel(claimed, func(i int) {
		r, err := p.inlined(ctx, objects, records[i])
		if err != nil {
			unread[i] = true
			results[i] = publish.Result{Status: publish.Failed, Class: retry.ClassifyError(err), Reason: err.Error(),
				Hint: fmt.Sprintf("the relay role may lack s3:GetObject on %s, or kms:Decrypt on the bucket's KMS key", records[i].DataRef.URI())}
		}
		sent[i] = r
	})
	var idx []int
	var batch []outbox.Record
	for i, r := range sent {
		if !unread[i] {
			idx, batch = append(idx, i), append(batch, r)
		}
	}
	if len(batch) == 0 {
		return results
	}
	for k, res := range p.Publisher.Publish(ctx, batch) {
		results[idx[k]] = res
	}
	var published []int
	for _, i := range claimed {
		if results[i].Status == publish.Published {
			published = append(published, i)
		}
	}
	inParallel(published, func(i int) {
		if err := p.tag(ctx, objects, *records[i].DataRef); err != nil {
			results[i] = publish.Result{Status: publish.Failed, Class: retry.ClassifyError(err), Reason: err.Error(),
				Hint: fmt.Sprintf("the relay role may lack s3:PutObjectTagging on %s", records[i].DataRef.URI())}
		}
	})
	return results
}

// claimedIndexes are the indexes of the claim-checked records.
func claimedIndexes(records []outbox.Record) []int {
	var out []int
	for i, r := range records {
		if r.DataRef != nil {
			out = append(out, i)
		}
	}
	return out
}

// inParallel runs fn for each index, publish.DefaultConcurrency at once.
func inParallel(indexes []int, fn func(i int)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, publish.DefaultConcurrency)
	for _, i := range indexes {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			fn(i)
		})
	}
	wg.Wait()
}

// inlined returns r with its object's data in place of its reference when
// that fits the kind's message, else r itself: when the data is too large,
// or is not what the reference describes. It fails when the object cannot
// be read.
func (p claimPublisher) inlined(ctx context.Context, objects ObjectStore, r outbox.Record) (outbox.Record, error) {
	ref := *r.DataRef
	if ref.Size > int64(p.limit) {
		return r, nil // the data alone is over the message's limit
	}
	data, err := p.read(ctx, objects, ref)
	if err != nil {
		return r, err
	}
	if inline, ok := p.fits(r, data); ok {
		return inline, nil
	}
	return r, nil
}

// fits returns r with data inline, and whether that is what the reference
// describes and fits the kind's message (a mismatch is the consumer's
// check to report).
func (p claimPublisher) fits(r outbox.Record, data []byte) (outbox.Record, bool) {
	inline, err := r.Inline(data)
	return inline, err == nil && inline.PublishedSizeOn(p.target) <= p.limit
}

// read reads ref's object, at most one byte more than the reference says
// (enough to tell a larger object), retrying transient errors under
// p.retry.
func (p claimPublisher) read(ctx context.Context, objects ObjectStore, ref outbox.DataRef) ([]byte, error) {
	data, err := getObject(ctx, objects, ref)
	for attempt := 1; err != nil && retry.IsTransient(err) && p.retry.Backoff(ctx, attempt); attempt++ {
		data, err = getObject(ctx, objects, ref)
	}
	return data, err
}

func getObject(ctx context.Context, objects ObjectStore, ref outbox.DataRef) ([]byte, error) {
	out, err := objects.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(ref.Bucket), Key: aws.String(ref.Key)})
	if err != nil {
		return nil, fmt.Errorf("reading %s to publish its data inline: %w", ref.URI(), err)
	}
	defer func() { _ = out.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(out.Body, ref.Size+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s to publish its data inline: %w", ref.URI(), err)
	}
	return data, nil
}

// tag tags ref's object published, retrying transient errors under
// p.retry.
func (p claimPublisher) tag(ctx context.Context, objects ObjectTagger, ref outbox.DataRef) error {
	err := tagPublished(ctx, objects, ref)
	for attempt := 1; err != nil && retry.IsTransient(err) && p.retry.Backoff(ctx, attempt); attempt++ {
		err = tagPublished(ctx, objects, ref)
	}
	return err
}

func tagPublished(ctx context.Context, objects ObjectTagger, ref outbox.DataRef) error {
	_, err := objects.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(ref.Bucket), Key: aws.String(ref.Key),
		Tagging: &s3types.Tagging{TagSet: []s3types.Tag{{Key: aws.String(outbox.ClaimStateTag), Value: aws.String(outbox.ClaimStatePublished)}}}})
	if err != nil {
		return fmt.Errorf("tagging %s published: %w", ref.URI(), err)
	}
	return nil
}

// Unwrap returns the publisher that p wraps.
func (p claimPublisher) Unwrap() publish.Publisher { return p.Publisher }

// KindPublisher returns the kind's own publisher inside what NewPublisher
// returns (an *EventBridgePublisher, *SNSPublisher or *SQSPublisher).
func KindPublisher(p publish.Publisher) publish.Publisher {
	for {
		w, ok := p.(interface{ Unwrap() publish.Publisher })
		if !ok {
			return p
		}
		p = w.Unwrap()
	}
}

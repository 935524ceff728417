package targetkind

import (
	"context"
	"fmt"
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

// claimTagger tags the object of every claim-checked event it published
// (outbox.ClaimStateTag), before the relay marks or deletes the item: from
// then on the bucket's lifecycle rule, not the sweep, removes it. A
// throttled or internally failed tagging is retried under the relay's
// policy, since the event is already published. An event whose object
// still cannot be tagged is reported failed, to be published again (a
// duplicate the consumers drop), so that its item is never deleted while
// its object looks uncommitted.
type claimTagger struct {
	publish.Publisher
	objects func() ObjectTagger
	retry   retry.Policy
}

func newClaimTagger(p publish.Publisher, cfg aws.Config, o PublisherOptions) claimTagger {
	objects := func() ObjectTagger { return s3.NewFromConfig(cfg) }
	if o.Objects != nil {
		objects = func() ObjectTagger { return o.Objects }
	}
	return claimTagger{Publisher: p, objects: objects, retry: o.Retry}
}

// Publish implements publish.Publisher. The objects are tagged in
// parallel, as the entries were published.
func (p claimTagger) Publish(ctx context.Context, records []outbox.Record) []publish.Result {
	results := p.Publisher.Publish(ctx, records)
	var objects ObjectTagger
	var wg sync.WaitGroup
	slots := make(chan struct{}, publish.DefaultConcurrency)
	for i, r := range records {
		if r.DataRef == nil || results[i].Status != publish.Published {
			continue
		}
		if objects == nil {
			objects = p.objects()
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := p.tag(ctx, objects, *r.DataRef); err != nil {
				results[i] = publish.Result{Status: publish.Failed, Class: retry.ClassifyError(err), Reason: err.Error(),
					Hint: fmt.Sprintf("the relay role may lack s3:PutObjectTagging on %s", r.DataRef.URI())}
			}
		})
	}
	wg.Wait()
	return results
}

// tag tags ref's object published, retrying transient errors under
// p.retry.
func (p claimTagger) tag(ctx context.Context, objects ObjectTagger, ref outbox.DataRef) error {
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
func (p claimTagger) Unwrap() publish.Publisher { return p.Publisher }

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

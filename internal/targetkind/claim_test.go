package targetkind

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// flakyTagger fails the first failures taggings of each object with code.
type flakyTagger struct {
	code     string
	failures int
	mu       sync.Mutex
	calls    map[string]int
}

func (f *flakyTagger) PutObjectTagging(_ context.Context, in *s3.PutObjectTaggingInput, _ ...func(*s3.Options)) (*s3.PutObjectTaggingOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[*in.Key]++
	if f.calls[*in.Key] <= f.failures {
		return nil, &smithy.GenericAPIError{Code: f.code, Message: "chaos"}
	}
	return &s3.PutObjectTaggingOutput{}, nil
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
		tagger := &flakyTagger{code: c.code, failures: c.failures, calls: map[string]int{}}
		r := aggregateRecords([]string{"order-1"}, 1, `{"total":3}`)[0]
		r.DataRef = &outbox.DataRef{Bucket: "claims", Key: outbox.ClaimObjectPrefix + r.EventID}
		p := claimTagger{Publisher: &SQSPublisher{Client: &fakeBatchTarget{}, QueueARN: testQueue, Retry: noWait},
			objects: func() ObjectTagger { return tagger }, retry: noWait}
		res := p.Publish(context.Background(), []outbox.Record{r})[0]
		if res.Status != c.want || tagger.calls[r.DataRef.Key] != c.wantCalls || (res.Reason != "") != c.wantReason {
			t.Errorf("%s failing %d times: %+v after %d taggings; want status %v after %d", c.code, c.failures, res, tagger.calls[r.DataRef.Key], c.want, c.wantCalls)
		}
	}
}

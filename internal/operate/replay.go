package operate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// ErrNothingToReplay is returned by Replay for a pipeline that deletes
// published items.
var ErrNothingToReplay = errors.New("nothing to replay")

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// Filter selects the events by the time they occurred (Since is
	// required), source and detail type.
	Filter Filter
	// Target is an event bus name, or the ARN of a bus, a topic or a queue
	// (targetkind.ForAddress); empty means the pipeline's own target.
	Target string
	// Rate caps the events published per second; 0 means no cap.
	Rate float64
	// Progress, when not nil, is called after each batch.
	Progress func(done, total int)
}

// ReplayResult says what Replay published.
type ReplayResult struct {
	// Target is where the events went.
	Target string
	// Selected counts the events in the window; Published and Failed
	// split them.
	Selected, Published, Failed int
	// Reasons are the reasons of the failures, most frequent first.
	Reasons []ReasonCount
	// First and Last are the times of occurrence of the first and last
	// event selected.
	First, Last time.Time
	// Origins counts, on a multi-Region pipeline, the events of the
	// window written in other Regions, left out; nil for a single-Region
	// one.
	Origins *OriginsOutput
}

// Replay publishes again, in order of occurrence and with their original
// ids, the PUBLISHED events of p that o selects. It uses the relay's
// publishers, so the events are those the relay published.
func (c *Clients) Replay(ctx context.Context, p *Pipeline, o ReplayOptions) (ReplayResult, error) {
	if p.Config.PublishedAction == config.ActionDelete {
		return ReplayResult{}, fmt.Errorf("pipeline %q deletes events once published (published.action = \"delete\"), so no published event is kept: %w; to replay in the future, use published.action = \"mark\", which keeps them for published.ttl", p.Name, ErrNothingToReplay)
	}
	if o.Filter.Since.IsZero() {
		return ReplayResult{}, errors.New("the start of the window is missing: pass --since, for example --since 24h or --since 2026-11-30T10:00:00Z")
	}
	scope, err := p.originScope(o.Filter.Origins)
	if err != nil {
		return ReplayResult{}, err
	}
	pub, target, err := c.publisher(p, o.Target)
	if err != nil {
		return ReplayResult{}, err
	}
	t := p.Table()
	var records []outbox.Record
	tl := newTally(scope)
	err = c.scan(ctx, t, statusCondition(outbox.StatusPublished, outbox.AttrOccurredAt, o.Filter), func(item map[string]types.AttributeValue) {
		if r, err := t.ParseItem(item); err == nil && tl.keep(r.Origin) {
			records = append(records, r)
		}
	})
	if err != nil {
		return ReplayResult{}, err
	}
	slices.SortFunc(records, func(a, b outbox.Record) int {
		return cmp.Or(a.OccurredAt.Compare(b.OccurredAt), cmp.Compare(a.EventID, b.EventID))
	})
	inSequence(records)
	res := ReplayResult{Target: target, Selected: len(records), Origins: tl.output()}
	if len(records) > 0 {
		res.First, res.Last = records[0].OccurredAt, records[len(records)-1].OccurredAt
	}
	return res, c.publishPaced(ctx, pub, records, o, &res)
}

// inSequence puts the ordered events among records, sorted by occurrence,
// in the order of their sequence within each ordering key, in the places
// the key's events hold: a key's events are replayed in the order they were
// published, whatever their times of occurrence say (a writer's clock, or
// an OccurredAt the application set), and the keys stay interleaved by
// time.
func inSequence(records []outbox.Record) {
	places := map[string][]int{}
	var keys []string
	for i, r := range records {
		if r.Sequence == 0 {
			continue
		}
		if _, ok := places[r.OrderingKey]; !ok {
			keys = append(keys, r.OrderingKey)
		}
		places[r.OrderingKey] = append(places[r.OrderingKey], i)
	}
	for _, k := range keys {
		idx := places[k]
		key := make([]outbox.Record, len(idx))
		for n, i := range idx {
			key[n] = records[i]
		}
		slices.SortStableFunc(key, func(a, b outbox.Record) int { return cmp.Compare(a.Sequence, b.Sequence) })
		for n, i := range idx {
			records[i] = key[n]
		}
	}
}

// publishPaced publishes records batch by batch, in order, at most o.Rate
// a second.
func (c *Clients) publishPaced(ctx context.Context, pub publish.Publisher, records []outbox.Record, o ReplayOptions, res *ReplayResult) error {
	batch := publish.MaxBatchEntries
	if o.Rate > 0 && o.Rate < float64(batch) {
		batch = max(1, int(o.Rate))
	}
	start := time.Now()
	reasons := map[string]int{}
	for i := 0; i < len(records); i += batch {
		chunk := records[i:min(i+batch, len(records))]
		for _, r := range pub.Publish(ctx, chunk) {
			if r.Status == publish.Published {
				res.Published++
			} else {
				res.Failed++
				reasons[r.Reason]++
			}
		}
		if o.Progress != nil {
			o.Progress(i+len(chunk), len(records))
		}
		if o.Rate > 0 {
			due := start.Add(time.Duration(float64(i+len(chunk)) / o.Rate * float64(time.Second)))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Until(due)):
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for r, n := range reasons {
		res.Reasons = append(res.Reasons, ReasonCount{Reason: r, Count: n})
	}
	slices.SortFunc(res.Reasons, func(a, b ReasonCount) int { return cmp.Compare(b.Count, a.Count) })
	return nil
}

// publisher returns the relay's publisher for address (the pipeline's own
// target when empty) and the target's address.
func (c *Clients) publisher(p *Pipeline, address string) (publish.Publisher, string, error) {
	s := p.Config.Target
	if address != "" {
		var err error
		if s, err = targetkind.ForAddress(address); err != nil {
			return nil, "", fmt.Errorf("--target %w; pass %s", err, targetkind.Addresses())
		}
	}
	pub, err := targetkind.NewPublisher(c.AWS, s, targetkind.PublisherOptions{Retry: retry.Default, Concurrency: 1})
	return pub, s.WithDefaults().Address(), err
}

package publish

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// EventBridgeAPI is the part of the EventBridge client the relay uses.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// EventBridge publishes with PutEvents: up to 10 entries and 256 KB per
// call, calls in parallel. An entry's source and detail type are the
// record's, its detail is the record's DetailJSON, its time the record's
// OccurredAt, and its trace header the record's, when set.
type EventBridge struct {
	Client EventBridgeAPI
	// EventBus is the bus name or ARN.
	EventBus string
	// Retry bounds the retries of throttled and internally failed entries.
	Retry retry.Policy
	// Concurrency bounds the calls in flight; 0 means DefaultConcurrency.
	Concurrency int
	// Region is the function's region, named in hints; "" when unknown.
	Region string
}

var _ Publisher = (*EventBridge)(nil)

// eventBridgePoison are the PutEvents entry codes that mean the entry itself
// is invalid (PutEventsResultEntry in the EventBridge API reference).
var eventBridgePoison = map[string]struct{}{"MalformedDetail": {}, "InvalidArgument": {}}

// hint names the probable fix of a PutEvents error code.
func (p *EventBridge) hint(code string) string {
	where := "the function's region"
	if p.Region != "" {
		where = p.Region
	}
	switch {
	case strings.HasPrefix(code, "AccessDenied"), code == "UnrecognizedClientException", code == "InvalidSignatureException":
		return fmt.Sprintf("the relay role may lack events:PutEvents on the bus %s", p.EventBus)
	case strings.HasPrefix(code, "NotAuthorizedFor"):
		return fmt.Sprintf("a policy of the bus %s may refuse this source or detail type for the relay role", p.EventBus)
	case strings.HasPrefix(code, "ResourceNotFound"), strings.Contains(code, "NotFound"):
		return fmt.Sprintf("the bus %s may not exist in %s", p.EventBus, where)
	case strings.HasPrefix(code, "KMS"):
		return fmt.Sprintf("the KMS key of the bus %s may be disabled, or its policy may deny the relay role", p.EventBus)
	case code == "InvalidAccountIdException":
		return fmt.Sprintf("the account of the bus %s may be wrong", p.EventBus)
	}
	return "unknown error code: the event stays pending and is retried; check the bus " + p.EventBus + " and the relay role"
}

// Publish implements Publisher.
func (p *EventBridge) Publish(ctx context.Context, records []outbox.Record) []Result {
	results := make([]Result, len(records))
	entries := make([]types.PutEventsRequestEntry, len(records))
	var sizes []int
	var index []int // position in records of each entry that is sent
	for i, r := range records {
		size := r.EventBridgeEntrySize()
		if size > MaxBatchBytes {
			results[i] = Result{Status: Rejected, Class: retry.ClassPoison, Reason: fmt.Sprintf("the event is %d bytes; EventBridge accepts at most %d", size, MaxBatchBytes)}
			continue
		}
		entries[i] = types.PutEventsRequestEntry{
			EventBusName: aws.String(p.EventBus),
			Source:       aws.String(r.Source),
			DetailType:   aws.String(r.DetailType),
			Detail:       aws.String(string(r.DetailJSON())),
			Time:         aws.Time(r.OccurredAt),
		}
		if r.TraceHeader != "" {
			entries[i].TraceHeader = aws.String(r.TraceHeader)
		}
		sizes = append(sizes, size)
		index = append(index, i)
	}
	chunks := acceptedChunks(sizes, index)
	send := func(ctx context.Context, idx []int) ([]entryResult, error) {
		in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(idx))}
		for k, i := range idx {
			in.Entries[k] = entries[i]
		}
		out, err := p.Client.PutEvents(ctx, in)
		if err != nil {
			return nil, err
		}
		res := make([]entryResult, len(idx))
		for k := range idx {
			if k >= len(out.Entries) {
				res[k] = entryResult{code: "InternalFailure", message: "PutEvents returned no result for the entry"}
				continue
			}
			e := out.Entries[k]
			if code := aws.ToString(e.ErrorCode); code != "" {
				res[k] = entryResult{code: code, message: aws.ToString(e.ErrorMessage)}
			} else {
				res[k] = entryResult{ok: true}
			}
		}
		return res, nil
	}
	batcher{target: "EventBridge", policy: p.Retry, concurrency: p.Concurrency, poison: eventBridgePoison, hint: p.hint}.run(ctx, chunks, send, results)
	return results
}

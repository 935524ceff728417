// Package publish is what every target kind's publisher shares (the kinds
// themselves are in package target): the result of one record, published,
// failed (worth trying again later) or rejected (the target will never
// accept it), and the Batcher that sends records in as few parallel batch
// calls as the service limits allow and retries the entries worth retrying.
//
// Only a fault of the event itself is a rejection: a detail the target calls
// malformed, an invalid field of the entry, an event over the size limit.
// Every other failure (access denied, a missing bus or topic, any KMS error,
// an unknown code, a failed call) leaves the event pending, with the failure
// class and a hint that names the probable fix.
package publish

import (
	"context"
	"fmt"
	"sync"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Limits shared by PutEvents, PublishBatch and SendMessageBatch; each
// kind's sizes are its Limits (outbox.TargetLimits).
const (
	// MaxBatchEntries is the number of entries one call accepts.
	MaxBatchEntries = 10
	// DefaultConcurrency is the number of calls in flight at once.
	DefaultConcurrency = 32
)

// Status is what became of one record.
type Status int

// Statuses of a Result.
const (
	// Published: the target accepted the event.
	Published Status = iota
	// Failed: the event was not published, but a later attempt may succeed
	// (throttling or server errors that outlasted the retries, a failed call).
	Failed
	// Rejected: the target will never accept the event (malformed detail,
	// invalid entry fields, too large).
	Rejected
)

func (s Status) String() string {
	switch s {
	case Published:
		return "published"
	case Failed:
		return "failed"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is the outcome of publishing one record.
type Result struct {
	Status Status
	// Reason says why the record failed or was rejected.
	Reason string
	// Retries counts how many times the entry was sent again after a
	// retryable failure.
	Retries int
	// Class is the kind of failure of a Failed or Rejected record.
	Class retry.Class
	// Hint names the probable fix of a Failed record, when one is known.
	Hint string
	// Deferred is true for a Failed record that was not sent: its run's
	// pace did not allow it before the deadline (Paced).
	Deferred bool
}

// Publisher publishes records. Publish returns one result per record, in
// order; it does not return an error, because every record gets its own.
type Publisher interface {
	Publish(ctx context.Context, records []outbox.Record) []Result
}

// Chunks splits entries of the given sizes, in order, into batches of at most
// maxCount entries and maxBytes bytes. It returns the indexes of each batch.
// An entry larger than maxBytes gets a batch of its own; callers reject such
// entries before chunking.
func Chunks(sizes []int, maxCount, maxBytes int) [][]int {
	var chunks [][]int
	var cur []int
	curBytes := 0
	for i, size := range sizes {
		if len(cur) > 0 && (len(cur) == maxCount || curBytes+size > maxBytes) {
			chunks = append(chunks, cur)
			cur, curBytes = nil, 0
		}
		cur = append(cur, i)
		curBytes += size
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// AcceptedChunks is Chunks of the accepted entries, of the given sizes,
// with each index turned into the entry's index in the batch (index[i] is
// the batch index of accepted entry i).
func AcceptedChunks(sizes, index []int, maxBytes int) [][]int {
	chunks := Chunks(sizes, MaxBatchEntries, maxBytes)
	for _, c := range chunks {
		for k := range c {
			c[k] = index[c[k]]
		}
	}
	return chunks
}

// EntryResult is what a batch call says about one of its entries.
type EntryResult struct {
	OK      bool
	Code    string
	Message string
}

// SendFunc makes one batch call for the entries with the given indexes and
// returns one EntryResult per index, or an error for the whole call.
type SendFunc func(ctx context.Context, idx []int) ([]EntryResult, error)

// Batcher runs batch calls in parallel and retries retryable entries.
type Batcher struct {
	// Target names the service in reasons ("EventBridge").
	Target      string
	Policy      retry.Policy
	Concurrency int
	// TooLong holds the error codes of a call refused whole for its total
	// size (an SQS queue whose MaximumMessageSize is under the kind's
	// batch total): such a call of several entries is sent again in
	// halves.
	TooLong map[string]struct{}
	// Poison holds the entry error codes that reject the event.
	Poison map[string]struct{}
	// Hint names the probable fix of an entry error code, or of a call
	// error's code.
	Hint func(code string) string
}

func (b Batcher) concurrency() int {
	if b.Concurrency <= 0 {
		return DefaultConcurrency
	}
	return b.Concurrency
}

// Run sends every chunk, in parallel, and fills results (indexed like the
// records). Entries that fail with a retryable code, and whole calls that
// fail with a transient error, are sent again with backoff while the policy
// allows; what still fails is Failed. Other entry errors are Rejected.
func (b Batcher) Run(ctx context.Context, chunks [][]int, send SendFunc, results []Result) {
	lanes := make([][][]int, len(chunks))
	for i, c := range chunks {
		lanes[i] = [][]int{c}
	}
	b.RunLanes(ctx, lanes, send, results)
}

// RunLanes is Run for chunks in lanes: the lanes run in parallel, the
// chunks of one lane one after the other, in order, so that entries of one
// lane reach the target in the order of the lane (a FIFO target's message
// group keeps its order).
func (b Batcher) RunLanes(ctx context.Context, lanes [][][]int, send SendFunc, results []Result) {
	sem := make(chan struct{}, b.concurrency())
	var wg sync.WaitGroup
	for _, lane := range lanes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, chunk := range lane {
				b.runChunk(ctx, chunk, send, results)
			}
		}()
	}
	wg.Wait()
}

func (b Batcher) runChunk(ctx context.Context, pending []int, send SendFunc, results []Result) {
	for attempt := 1; ; attempt++ {
		var again []int
		out, err := send(ctx, pending)
		if _, tooLong := b.TooLong[retry.ErrorCode(err)]; err != nil && tooLong && len(pending) > 1 {
			half := len(pending) / 2
			b.runChunk(ctx, pending[:half], send, results)
			b.runChunk(ctx, pending[half:], send, results)
			return
		}
		if err != nil {
			class := retry.ClassifyError(err)
			for _, i := range pending {
				results[i] = Result{Status: Failed, Reason: fmt.Sprintf("%s call failed: %v", b.Target, err),
					Retries: results[i].Retries, Class: class, Hint: b.Hint(retry.ErrorCode(err))}
			}
			if retry.IsTransient(err) {
				again = pending
			}
		} else {
			again = b.settle(pending, out, results)
		}
		if len(again) == 0 || !b.Policy.Backoff(ctx, attempt) {
			return
		}
		for _, i := range again {
			results[i].Retries++
		}
		pending = again
	}
}

// settle records the results of one call and returns the entries worth
// sending again at once: throttled or failed inside the service.
func (b Batcher) settle(pending []int, out []EntryResult, results []Result) (again []int) {
	for k, i := range pending {
		e := out[k]
		if e.OK {
			results[i].Status, results[i].Reason, results[i].Class, results[i].Hint = Published, "", "", ""
			continue
		}
		class := retry.ClassifyCode(e.Code, b.Poison)
		r := Result{Status: Failed, Reason: fmt.Sprintf("%s: %s: %s", b.Target, e.Code, e.Message), Retries: results[i].Retries, Class: class}
		switch class {
		case retry.ClassPoison:
			r.Status, r.Reason = Rejected, fmt.Sprintf("%s rejected the event: %s: %s", b.Target, e.Code, e.Message)
		case retry.ClassThrottling, retry.ClassTransient:
			again = append(again, i)
		default:
			r.Hint = b.Hint(e.Code)
		}
		results[i] = r
	}
	return again
}

// TooLarge is the result of a record whose entry, of size bytes, is over
// the limit of the target service.
func TooLarge(service string, size, limit int) Result {
	return Result{Status: Rejected, Class: retry.ClassPoison, Reason: fmt.Sprintf("the event is %d bytes; %s accepts at most %d", size, service, limit)}
}

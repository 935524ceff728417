// Package relaytest provides a fake of the AWS calls the relay makes, for
// tests and benchmarks, plus builders of DynamoDB stream events in their real
// JSON format.
//
// The fake's DynamoDB is a real engine: every fake created with New runs its
// own in-process local AWS stack (internal/localaws, DynamoDB only) with the
// outbox table and its pending index, and forwards the relay's DynamoDB calls
// to it through the AWS SDK. EventBridge, SNS and SQS are recorded in
// memory, with their service limits enforced. Around every call the fake
// adds a fixed latency (and, with CallLatency, one drawn per call), call
// counters and failure injection, and optionally holds calls in lockstep to
// count a caller's round trips whatever the machine's load (AWS.Lockstep).
package relaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Operation names, as counted by AWS.Calls.
const (
	OpPutEvents      = "PutEvents"
	OpPublishBatch   = "PublishBatch"
	OpUpdateItem     = "UpdateItem"
	OpDeleteItem     = "DeleteItem"
	OpGetItem        = "GetItem"
	OpPutItem        = "PutItem"
	OpBatchWriteItem = "BatchWriteItem"
	OpQuery          = "Query"
	OpScan           = "Scan"
	OpBatchGetItem   = "BatchGetItem"
	OpDescribeTable  = "DescribeTable"
)

// Published is an event accepted by the fake EventBridge or SNS.
type Published struct {
	Target      string // "eventbridge" or "sns"
	EventID     string
	Source      string
	DetailType  string
	Body        string // the detail (EventBridge) or the message (SNS)
	Time        time.Time
	EventBus    string
	TraceHeader string
	Attributes  map[string]string
	// Accepted is when the fake accepted the event, at the end of the
	// call's latency.
	Accepted time.Time
}

// AWS is the fake; create it with New. Set the exported hooks before use;
// it is safe for concurrent use afterwards.
type AWS struct {
	// Table is the outbox table the fake serves; set by New.
	Table outbox.Table
	// Latency is added to every call.
	Latency time.Duration
	// CallLatency, when set, returns more latency for one call of op (a
	// draw of a latency model), added to Latency.
	CallLatency func(op string) time.Duration

	// EntryError returns the error code of an entry of PutEvents or
	// PublishBatch, "" for success. attempt counts the sends of that event,
	// from 1.
	EntryError func(eventID string, attempt int) string
	// SNSSenderFault reports whether an SNS entry error is the sender's fault.
	SNSSenderFault func(code string) bool
	// CallError returns an error for a whole call, nil for none. n counts the
	// calls of that operation, from 1.
	CallError func(op string, n int) error
	// WriteError returns an error for an UpdateItem or DeleteItem of the item
	// with the given sort key, nil for none.
	WriteError func(sortKey string, attempt int) error
	// Unprocessed reports whether BatchWriteItem leaves the delete of the
	// item with the given sort key unprocessed on this attempt.
	Unprocessed func(sortKey string, attempt int) bool
	// ReadError returns an error for a BatchGetItem that reads the item with
	// the given sort key, nil for none.
	ReadError func(sortKey string) error
	// UnprocessedRead reports whether BatchGetItem leaves the key of the
	// item with the given sort key unprocessed on this attempt.
	UnprocessedRead func(sortKey string, attempt int) bool

	tb testing.TB
	db *dynamodb.Client // the engine

	mu        sync.Mutex
	calls     map[string]int
	spans     []span
	published []Published
	attempts  map[string]int
	readUnits float64
	lockstep  *lockstep
}

// span is when one call started and ended.
type span struct{ start, end time.Time }

// begin counts a call of op and waits for the latency. The caller must call
// done when the call ends.
func (f *AWS) begin(ctx context.Context, op string) (done func(), err error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
	n := f.calls[op]
	i := len(f.spans)
	f.spans = append(f.spans, span{start: time.Now()})
	hook, gate, latency := f.CallError, f.lockstep, f.Latency
	f.mu.Unlock()
	if f.CallLatency != nil {
		latency += f.CallLatency(op)
	}
	done = func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if i < len(f.spans) {
			f.spans[i].end = time.Now()
		}
	}
	if gate != nil {
		if err := gate.wait(ctx, op); err != nil {
			return done, err
		}
	}
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return done, ctx.Err()
		case <-t.C:
		}
	}
	if hook != nil {
		if err := hook(op, n); err != nil {
			return done, err
		}
	}
	return done, nil
}

func (f *AWS) attempt(key string) int {
	if f.attempts == nil {
		f.attempts = map[string]int{}
	}
	f.attempts[key]++
	return f.attempts[key]
}

// Calls returns the number of calls of op, or of every operation when op is "".
func (f *AWS) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if op != "" {
		return f.calls[op]
	}
	total := 0
	for _, n := range f.calls {
		total += n
	}
	return total
}

// RoundTrips returns the number of sequential round trips made so far: the
// length of the longest chain of calls in which each call started after the
// previous one had ended. Calls that overlap are concurrent and count once.
// It measures wall-clock overlap, which a loaded machine stretches: a figure
// for benchmarks; tests count round trips with Lockstep.
func (f *AWS) RoundTrips() int {
	f.mu.Lock()
	spans := slices.Clone(f.spans)
	f.mu.Unlock()
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	depth := make([]int, len(spans))
	longest := 0
	for i, s := range spans {
		depth[i] = 1
		for j := range i {
			if !spans[j].end.IsZero() && !spans[j].end.After(s.start) {
				depth[i] = max(depth[i], depth[j]+1)
			}
		}
		longest = max(longest, depth[i])
	}
	return longest
}

// ResetCounters forgets the calls made so far, and ends Lockstep.
func (f *AWS) ResetCounters() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.spans, f.attempts, f.published, f.readUnits, f.lockstep = nil, nil, nil, nil, 0, nil
}

// Published returns the events published so far.
func (f *AWS) Published() []Published {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.published)
}

func apiError(code, msg string) error {
	return &smithy.GenericAPIError{Code: code, Message: msg, Fault: smithy.FaultClient}
}

// PutEvents enforces the limits of 10 entries and 256 KB.
func (f *AWS) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	done, err := f.begin(ctx, OpPutEvents)
	defer done()
	if err != nil {
		return nil, err
	}
	if len(in.Entries) == 0 || len(in.Entries) > 10 {
		return nil, apiError("ValidationException", fmt.Sprintf("%d entries; 1 to 10 allowed", len(in.Entries)))
	}
	size := 0
	for _, e := range in.Entries {
		size += 14 + len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	}
	if size > outbox.TargetLimits[outbox.TargetEventBridge].BatchBytes {
		return nil, apiError("ValidationException", fmt.Sprintf("total size of the entries in the request is %d, over the limit", size))
	}
	ids := make([]string, len(in.Entries))
	for i, e := range in.Entries {
		var d outbox.PublishedDetail
		_ = json.Unmarshal([]byte(aws.ToString(e.Detail)), &d)
		ids[i] = d.Metadata.EventID
	}
	out := &eventbridge.PutEventsOutput{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, e := range in.Entries {
		id := ids[i]
		code := ""
		if f.EntryError != nil {
			code = f.EntryError(id, f.attempt("publish:"+id))
		}
		if code != "" {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String(code), ErrorMessage: aws.String("injected")})
			continue
		}
		f.published = append(f.published, Published{
			Target: "eventbridge", EventID: id, Source: aws.ToString(e.Source), DetailType: aws.ToString(e.DetailType),
			Body: aws.ToString(e.Detail), Time: aws.ToTime(e.Time), EventBus: aws.ToString(e.EventBusName),
			TraceHeader: aws.ToString(e.TraceHeader), Accepted: time.Now(),
		})
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("eb-" + id)})
	}
	return out, nil
}

// FailEvent is an EntryError that fails every attempt of one event with
// code and lets every other event through.
func FailEvent(eventID, code string) func(string, int) string {
	return func(id string, _ int) string {
		if id == eventID {
			return code
		}
		return ""
	}
}

// PublishBatch enforces the limits of 10 messages, 256 KB and unique ids.
func (f *AWS) PublishBatch(ctx context.Context, in *sns.PublishBatchInput, _ ...func(*sns.Options)) (*sns.PublishBatchOutput, error) {
	entries := make([]message, len(in.PublishBatchRequestEntries))
	for i, e := range in.PublishBatchRequestEntries {
		entries[i] = message{id: aws.ToString(e.Id), body: aws.ToString(e.Message), attrs: map[string]string{}}
		for name, v := range e.MessageAttributes {
			entries[i].attrs[name] = aws.ToString(v.StringValue)
			entries[i].attrBytes += len(name) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue))
		}
	}
	results, err := f.sendMessages(ctx, OpPublishBatch, "sns", entries, outbox.TargetLimits[outbox.TargetSNS].BatchBytes)
	if err != nil {
		return nil, err
	}
	out := &sns.PublishBatchOutput{}
	for i, r := range results {
		id := aws.String(entries[i].id)
		if r.code != "" {
			out.Failed = append(out.Failed, snstypes.BatchResultErrorEntry{Id: id, Code: aws.String(r.code), Message: aws.String("injected"), SenderFault: r.sender})
		} else {
			out.Successful = append(out.Successful, snstypes.PublishBatchResultEntry{Id: id, MessageId: aws.String("sns-" + r.eventID)})
		}
	}
	return out, nil
}

// message is one entry of PublishBatch or SendMessageBatch.
type message struct {
	id, body  string
	attrs     map[string]string
	attrBytes int // what the attributes count towards the batch's size
}

// messageResult is what became of a message: published, or failed with
// code, the sender's fault or not.
type messageResult struct {
	eventID string
	code    string
	sender  bool
}

// sendMessages is PublishBatch and SendMessageBatch: up to 10 messages of
// unique ids and at most maxBytes together; each fails as EntryError says
// (the sender's fault unless SNSSenderFault says otherwise) or is recorded
// as published to target.
func (f *AWS) sendMessages(ctx context.Context, op, target string, entries []message, maxBytes int) ([]messageResult, error) {
	done, err := f.begin(ctx, op)
	defer done()
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 || len(entries) > 10 {
		return nil, apiError("TooManyEntriesInBatchRequest", fmt.Sprintf("%d entries", len(entries)))
	}
	size := 0
	ids := map[string]bool{}
	for _, e := range entries {
		size += len(e.body) + e.attrBytes
		if ids[e.id] {
			return nil, apiError("BatchEntryIdsNotDistinct", "duplicate id")
		}
		ids[e.id] = true
	}
	if size > maxBytes {
		return nil, apiError("BatchRequestTooLong", fmt.Sprintf("%d bytes", size))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	results := make([]messageResult, len(entries))
	for i, e := range entries {
		var env outbox.Envelope
		_ = json.Unmarshal([]byte(e.body), &env)
		results[i].eventID = env.ID
		if f.EntryError != nil {
			results[i].code = f.EntryError(env.ID, f.attempt("publish:"+env.ID))
		}
		if results[i].code != "" {
			results[i].sender = f.SNSSenderFault == nil || f.SNSSenderFault(results[i].code)
			continue
		}
		t, _ := time.Parse(time.RFC3339, env.Time)
		f.published = append(f.published, Published{
			Target: target, EventID: env.ID, Source: env.Source, DetailType: env.DetailType, Body: e.body, Time: t, Attributes: e.attrs,
			Accepted: time.Now(),
		})
	}
	return results, nil
}

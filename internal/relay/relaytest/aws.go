// Package relaytest provides an in-memory fake of the AWS calls the relay
// makes (DynamoDB, EventBridge, SNS), with the service limits enforced, call
// counters, a fixed latency per call and failure injection, plus builders of
// DynamoDB stream events in their real JSON format. It is for tests and
// benchmarks.
package relaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
	OpBatchWriteItem = "BatchWriteItem"
	OpQuery          = "Query"
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
}

// AWS is the fake. Set the exported fields before use; it is safe for
// concurrent use afterwards.
type AWS struct {
	// Table is the outbox table the fake serves.
	Table outbox.Table
	// Latency is added to every call.
	Latency time.Duration

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

	mu        sync.Mutex
	items     map[string]map[string]ddb.AttributeValue
	calls     map[string]int
	spans     []span
	published []Published
	attempts  map[string]int
}

// span is when one call started and ended.
type span struct{ start, end time.Time }

// begin counts a call of op and waits for the latency. The caller must call
// done when the call ends.
func (f *AWS) begin(ctx context.Context, op string) (n int, done func(), err error) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
	n = f.calls[op]
	i := len(f.spans)
	f.spans = append(f.spans, span{start: time.Now()})
	hook := f.CallError
	f.mu.Unlock()
	done = func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if i < len(f.spans) {
			f.spans[i].end = time.Now()
		}
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return n, done, ctx.Err()
		case <-t.C:
		}
	}
	if hook != nil {
		if err := hook(op, n); err != nil {
			return n, done, err
		}
	}
	return n, done, nil
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

// ResetCounters forgets the calls made so far.
func (f *AWS) ResetCounters() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.spans, f.attempts, f.published = nil, nil, nil, nil
}

// Published returns the events published so far.
func (f *AWS) Published() []Published {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.published)
}

// Put stores an item.
func (f *AWS) Put(item map[string]ddb.AttributeValue) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.items == nil {
		f.items = map[string]map[string]ddb.AttributeValue{}
	}
	f.items[f.key(item)] = item
}

// PutRecord stores the item of a pending record.
func (f *AWS) PutRecord(r outbox.Record) { f.Put(f.Table.Item(r)) }

// Item returns the stored item with the given keys, or nil.
func (f *AWS) Item(pk, sk string) map[string]ddb.AttributeValue {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.items[pk+"\x00"+sk]
}

// Status returns the status attribute of an item, or "" if it is gone.
func (f *AWS) Status(r outbox.Record) string {
	item := f.Item(r.PartitionKey, r.SortKey)
	if item == nil {
		return ""
	}
	s, _ := item[outbox.AttrStatus].(*ddb.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

func (f *AWS) key(item map[string]ddb.AttributeValue) string {
	return str(item[f.Table.PartitionKey]) + "\x00" + str(item[f.Table.SortKey])
}

func str(v ddb.AttributeValue) string {
	if s, ok := v.(*ddb.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func apiError(code, msg string) error {
	return &smithy.GenericAPIError{Code: code, Message: msg, Fault: smithy.FaultClient}
}

// PutEvents enforces the limits of 10 entries and 256 KB.
func (f *AWS) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	_, done, err := f.begin(ctx, OpPutEvents)
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
	if size > outbox.MaxEntryBytes {
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
			TraceHeader: aws.ToString(e.TraceHeader),
		})
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("eb-" + id)})
	}
	return out, nil
}

// PublishBatch enforces the limits of 10 messages, 256 KB and unique ids.
func (f *AWS) PublishBatch(ctx context.Context, in *sns.PublishBatchInput, _ ...func(*sns.Options)) (*sns.PublishBatchOutput, error) {
	_, done, err := f.begin(ctx, OpPublishBatch)
	defer done()
	if err != nil {
		return nil, err
	}
	entries := in.PublishBatchRequestEntries
	if len(entries) == 0 || len(entries) > 10 {
		return nil, apiError("TooManyEntriesInBatchRequest", fmt.Sprintf("%d entries", len(entries)))
	}
	size := 0
	ids := map[string]bool{}
	for _, e := range entries {
		size += len(aws.ToString(e.Message))
		for name, v := range e.MessageAttributes {
			size += len(name) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue))
		}
		if ids[aws.ToString(e.Id)] {
			return nil, apiError("BatchEntryIdsNotDistinct", "duplicate id")
		}
		ids[aws.ToString(e.Id)] = true
	}
	if size > outbox.MaxEntryBytes {
		return nil, apiError("BatchRequestTooLong", fmt.Sprintf("%d bytes", size))
	}
	out := &sns.PublishBatchOutput{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range entries {
		var env outbox.Envelope
		_ = json.Unmarshal([]byte(aws.ToString(e.Message)), &env)
		code := ""
		if f.EntryError != nil {
			code = f.EntryError(env.ID, f.attempt("publish:"+env.ID))
		}
		if code != "" {
			sender := true
			if f.SNSSenderFault != nil {
				sender = f.SNSSenderFault(code)
			}
			out.Failed = append(out.Failed, snstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String(code), Message: aws.String("injected"), SenderFault: sender})
			continue
		}
		attrs := map[string]string{}
		for name, v := range e.MessageAttributes {
			attrs[name] = aws.ToString(v.StringValue)
		}
		t, _ := time.Parse(time.RFC3339, env.Time)
		f.published = append(f.published, Published{
			Target: "sns", EventID: env.ID, Source: env.Source, DetailType: env.DetailType,
			Body: aws.ToString(e.Message), Time: t, Attributes: attrs,
		})
		out.Successful = append(out.Successful, snstypes.PublishBatchResultEntry{Id: e.Id, MessageId: aws.String("sns-" + env.ID)})
	}
	return out, nil
}

// UpdateItem applies SET, REMOVE and ADD clauses, conditioned on
// "name = :value" conditions, as the outbox's MarkPublished and MarkFailed
// updates use them.
func (f *AWS) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	_, done, err := f.begin(ctx, OpUpdateItem)
	defer done()
	if err != nil {
		return nil, err
	}
	if aws.ToString(in.TableName) != f.Table.Name {
		return nil, apiError("ResourceNotFoundException", "no table "+aws.ToString(in.TableName))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sk := str(in.Key[f.Table.SortKey])
	if f.WriteError != nil {
		if err := f.WriteError(sk, f.attempt("write:"+sk)); err != nil {
			return nil, err
		}
	}
	k := f.key(in.Key)
	item := f.items[k]
	if cond := aws.ToString(in.ConditionExpression); cond != "" {
		if !evalCondition(cond, item, in.ExpressionAttributeNames, in.ExpressionAttributeValues) {
			return nil, &ddb.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
		}
	}
	if item == nil {
		item = map[string]ddb.AttributeValue{}
		for n, v := range in.Key {
			item[n] = v
		}
	}
	updated, err := applyUpdate(aws.ToString(in.UpdateExpression), item, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, apiError("ValidationException", err.Error())
	}
	f.items[k] = updated
	return &dynamodb.UpdateItemOutput{}, nil
}

// DeleteItem deletes one item (used by the naive relay).
func (f *AWS) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	_, done, err := f.begin(ctx, OpDeleteItem)
	defer done()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sk := str(in.Key[f.Table.SortKey])
	if f.WriteError != nil {
		if err := f.WriteError(sk, f.attempt("write:"+sk)); err != nil {
			return nil, err
		}
	}
	delete(f.items, f.key(in.Key))
	return &dynamodb.DeleteItemOutput{}, nil
}

// BatchWriteItem handles delete requests: at most 25, no duplicate keys.
func (f *AWS) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	_, done, err := f.begin(ctx, OpBatchWriteItem)
	defer done()
	if err != nil {
		return nil, err
	}
	n := 0
	for _, reqs := range in.RequestItems {
		n += len(reqs)
	}
	if n == 0 || n > 25 {
		return nil, apiError("ValidationException", fmt.Sprintf("%d write requests; 1 to 25 allowed", n))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]ddb.WriteRequest{}}
	seen := map[string]bool{}
	for table, reqs := range in.RequestItems {
		if table != f.Table.Name {
			return nil, apiError("ResourceNotFoundException", "no table "+table)
		}
		for _, wr := range reqs {
			if wr.DeleteRequest == nil {
				return nil, apiError("ValidationException", "only deletes are supported by the fake")
			}
			k := f.key(wr.DeleteRequest.Key)
			if seen[k] {
				return nil, apiError("ValidationException", "Provided list of item keys contains duplicates")
			}
			seen[k] = true
		}
		for _, wr := range reqs {
			sk := str(wr.DeleteRequest.Key[f.Table.SortKey])
			if f.Unprocessed != nil && f.Unprocessed(sk, f.attempt("batch:"+sk)) {
				out.UnprocessedItems[table] = append(out.UnprocessedItems[table], wr)
				continue
			}
			delete(f.items, f.key(wr.DeleteRequest.Key))
		}
	}
	return out, nil
}

// Query serves the pending index query of outbox.Table.PendingQuery, with
// Limit and ExclusiveStartKey, oldest first.
func (f *AWS) Query(ctx context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	_, done, err := f.begin(ctx, OpQuery)
	defer done()
	if err != nil {
		return nil, err
	}
	if aws.ToString(in.IndexName) != f.Table.PendingIndexName {
		return nil, apiError("ValidationException", "the fake only queries the pending index")
	}
	// "#shard = :shard AND #since <= :cutoff"
	tok := strings.Fields(aws.ToString(in.KeyConditionExpression))
	if len(tok) != 7 || tok[1] != "=" || tok[3] != "AND" || tok[5] != "<=" {
		return nil, apiError("ValidationException", "unsupported key condition")
	}
	shardAttr, sinceAttr := name(tok[0], in.ExpressionAttributeNames), name(tok[4], in.ExpressionAttributeNames)
	shard := str(in.ExpressionAttributeValues[tok[2]])
	cutoff := num(in.ExpressionAttributeValues[tok[6]])

	f.mu.Lock()
	defer f.mu.Unlock()
	type entry struct {
		since  int64
		pk, sk string
		item   map[string]ddb.AttributeValue
	}
	var matches []entry
	for _, item := range f.items {
		if str(item[shardAttr]) != shard {
			continue
		}
		since, ok := item[sinceAttr].(*ddb.AttributeValueMemberN)
		if !ok {
			continue
		}
		s, _ := strconv.ParseInt(since.Value, 10, 64)
		if s > cutoff {
			continue
		}
		matches = append(matches, entry{s, str(item[f.Table.PartitionKey]), str(item[f.Table.SortKey]), item})
	}
	sort.Slice(matches, func(i, j int) bool {
		a, b := matches[i], matches[j]
		if a.since != b.since {
			return a.since < b.since
		}
		if a.pk != b.pk {
			return a.pk < b.pk
		}
		return a.sk < b.sk
	})
	if start := in.ExclusiveStartKey; start != nil {
		s := entry{num(start[sinceAttr]), str(start[f.Table.PartitionKey]), str(start[f.Table.SortKey]), nil}
		k := sort.Search(len(matches), func(i int) bool {
			m := matches[i]
			if m.since != s.since {
				return m.since > s.since
			}
			if m.pk != s.pk {
				return m.pk > s.pk
			}
			return m.sk > s.sk
		})
		matches = matches[k:]
	}
	out := &dynamodb.QueryOutput{}
	limit := len(matches)
	if in.Limit != nil && int(*in.Limit) < limit {
		limit = int(*in.Limit)
	}
	for _, m := range matches[:limit] {
		out.Items = append(out.Items, clone(m.item))
	}
	if limit < len(matches) && limit > 0 {
		last := matches[limit-1].item
		out.LastEvaluatedKey = map[string]ddb.AttributeValue{
			f.Table.PartitionKey: last[f.Table.PartitionKey], f.Table.SortKey: last[f.Table.SortKey],
			shardAttr: last[shardAttr], sinceAttr: last[sinceAttr],
		}
	}
	out.Count = int32(len(out.Items))
	return out, nil
}

func clone(item map[string]ddb.AttributeValue) map[string]ddb.AttributeValue {
	c := make(map[string]ddb.AttributeValue, len(item))
	for k, v := range item {
		c[k] = v
	}
	return c
}

func name(token string, names map[string]string) string {
	if n, ok := names[token]; ok {
		return n
	}
	return token
}

func num(v ddb.AttributeValue) int64 {
	n, ok := v.(*ddb.AttributeValueMemberN)
	if !ok {
		return 0
	}
	i, _ := strconv.ParseInt(n.Value, 10, 64)
	return i
}

// evalCondition evaluates "a = :v [AND b = :w ...]"; a missing item fails.
func evalCondition(cond string, item map[string]ddb.AttributeValue, names map[string]string, values map[string]ddb.AttributeValue) bool {
	if item == nil {
		return false
	}
	for _, part := range strings.Split(cond, " AND ") {
		tok := strings.Fields(part)
		if len(tok) != 3 || tok[1] != "=" {
			return false
		}
		got, ok := item[name(tok[0], names)]
		if !ok || !equal(got, values[tok[2]]) {
			return false
		}
	}
	return true
}

func equal(a, b ddb.AttributeValue) bool {
	switch a := a.(type) {
	case *ddb.AttributeValueMemberS:
		b, ok := b.(*ddb.AttributeValueMemberS)
		return ok && a.Value == b.Value
	case *ddb.AttributeValueMemberN:
		b, ok := b.(*ddb.AttributeValueMemberN)
		return ok && a.Value == b.Value
	}
	return false
}

// applyUpdate applies "SET a = :v, ... REMOVE b, ... ADD c :n, ...".
func applyUpdate(expr string, item map[string]ddb.AttributeValue, names map[string]string, values map[string]ddb.AttributeValue) (map[string]ddb.AttributeValue, error) {
	out := clone(item)
	section := ""
	var clauses = map[string][]string{}
	for _, tok := range strings.Fields(expr) {
		switch tok {
		case "SET", "REMOVE", "ADD":
			section = tok
			continue
		}
		clauses[section] = append(clauses[section], tok)
	}
	for section, toks := range clauses {
		for _, action := range strings.Split(strings.Join(toks, " "), ",") {
			f := strings.Fields(action)
			switch {
			case section == "SET" && len(f) == 3 && f[1] == "=":
				v, ok := values[f[2]]
				if !ok {
					return nil, fmt.Errorf("value %s is not defined", f[2])
				}
				out[name(f[0], names)] = v
			case section == "REMOVE" && len(f) == 1:
				delete(out, name(f[0], names))
			case section == "ADD" && len(f) == 2:
				n := name(f[0], names)
				out[n] = &ddb.AttributeValueMemberN{Value: strconv.FormatInt(num(out[n])+num(values[f[1]]), 10)}
			default:
				return nil, fmt.Errorf("unsupported update action %q in %s", action, section)
			}
		}
	}
	return out, nil
}

package esm

import (
	"cmp"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

// queueKind is an SQS queue event source, as "Using Lambda with Amazon
// SQS" and "Lambda parameters for Amazon SQS event source mappings"
// document it: batches of up to BatchSize messages (10 by default; at
// most 10 for a FIFO queue, and above 10 only with a batching window),
// received with the queue's visibility timeout; a batch the function
// processed is deleted, a failed one is left to become visible again, and
// with ReportBatchItemFailures only the reported messages are left. The
// queue's redrive policy, not Lambda, moves a message received
// maxReceiveCount times to the dead-letter queue, and the queue, not
// Lambda, holds a FIFO group back while one of its messages is in flight.
type queueKind struct{}

// queueMembers are the members of the API a queue mapping takes beyond
// the common ones.
var queueMembers = map[string]bool{"ScalingConfig": true}

// defaultQueuePollers is how many batches a queue mapping without
// ScalingConfig processes at once: Lambda starts with five pollers ("Using
// Lambda with Amazon SQS", scaling).
const defaultQueuePollers = 5

// maxFIFOBatch is the largest batch of a FIFO queue mapping.
const maxFIFOBatch = 10

// queueAccessActions are the actions Lambda needs on the queue.
var queueAccessActions = []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}

func (queueKind) owns(arn string) bool {
	a, err := awsapi.ParseARN(arn)
	return err == nil && a.Service == "sqs" && a.Resource != ""
}

func (queueKind) defaults(st *Settings) { st.BatchSize = 10 }

func (queueKind) apply(s *Service, in *mappingInput, st *Settings, _ bool) error {
	if err := refuseMembers(in, queueMembers); err != nil {
		return err
	}
	if in.ScalingConfig != nil {
		st.MaximumConcurrency = 0
		if in.ScalingConfig.MaximumConcurrency != nil {
			st.MaximumConcurrency = int(*in.ScalingConfig.MaximumConcurrency)
		}
	}
	fifo, visibility, found := false, 0, false
	if msgs, err := s.messages(); err == nil {
		fifo, visibility, found = msgs.QueueInfo(st.EventSourceArn)
	}
	if found {
		if err := checkVisibility(s, st, visibility); err != nil {
			return err
		}
	}
	switch {
	case fifo && st.BatchSize > maxFIFOBatch:
		return InvalidParameterValueException("BatchSize %d is over the maximum of %d for a FIFO queue: set BatchSize to 10 or less.", st.BatchSize, maxFIFOBatch)
	case fifo && st.MaximumBatchingWindowInSeconds > 0:
		return InvalidParameterValueException("MaximumBatchingWindowInSeconds is not supported for FIFO queues: set it to 0.")
	case st.BatchSize > maxFIFOBatch && st.MaximumBatchingWindowInSeconds < 1:
		return InvalidParameterValueException("Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10: set MaximumBatchingWindowInSeconds to at least 1.")
	}
	return nil
}

// FunctionTimeouts is implemented by Functions that know a function's
// timeout, which a queue's visibility timeout may not be shorter than.
type FunctionTimeouts interface {
	FunctionTimeout(name string) (seconds int, ok bool)
}

// checkVisibility refuses a queue whose visibility timeout is shorter than
// the function's timeout, as Lambda does.
func checkVisibility(s *Service, st *Settings, visibility int) error {
	fns, err := s.functions()
	if err != nil {
		return err
	}
	ft, ok := fns.(FunctionTimeouts)
	if !ok {
		return nil
	}
	base, _ := splitQualifier(st.FunctionArn)
	if timeout, ok := ft.FunctionTimeout(base); ok && visibility < timeout {
		return InvalidParameterValueException("Queue visibility timeout: %d seconds is less than Function timeout: %d seconds", visibility, timeout)
	}
	return nil
}

func (queueKind) exists(s *Service, arn string) error {
	msgs, err := s.messages()
	if err != nil {
		return err
	}
	if _, _, ok := msgs.QueueInfo(arn); !ok {
		return InvalidParameterValueException("Error occurred while ReceiveMessage. SQS Error Code: AWS.SimpleQueueService.NonExistentQueue. SQS Error Message: The specified queue does not exist: %s", arn)
	}
	return nil
}

func (queueKind) checkAccess(s *Service, roleArn string, st *Settings) error {
	for _, action := range queueAccessActions {
		if err := s.authorizeRole(roleArn, action, st.EventSourceArn); err != nil {
			return InvalidParameterValueException("The provided execution role does not have permissions to call %s on SQS", action[len("sqs:"):])
		}
	}
	return nil
}

func (queueKind) render(st Settings, c *Configuration) {
	if st.MaximumConcurrency > 0 {
		n := int64(st.MaximumConcurrency)
		c.ScalingConfig = &wireScalingConfig{MaximumConcurrency: &n}
	}
}

func (s *Service) messages() (QueueMessages, error) {
	return awsapi.Dependency(s.cfg.Messages, "sqs", awsapi.ServiceUnavailable)
}

// run runs the mapping's pollers: MaximumConcurrency of them (five
// without ScalingConfig), each receiving and invoking one batch at a time.
func (queueKind) run(ctx context.Context, m *mapping, st Settings) {
	q := &queueRun{m: m, settings: st, interval: m.svc.pollInterval()}
	q.matchers = compileFilters(m.svc, st.Filters)
	n := st.MaximumConcurrency
	if n == 0 {
		n = cmp.Or(m.svc.cfg.QueuePollers, defaultQueuePollers)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.poller(ctx)
		}()
	}
	wg.Wait()
}

// queueRun is one run of a queue mapping's pollers, with fixed settings.
type queueRun struct {
	m        *mapping
	settings Settings
	matchers []Matcher
	interval time.Duration
}

// queueRecord is a received message and its rendering in the event.
type queueRecord struct {
	msg  sqs.Received
	json []byte
}

func (q *queueRun) poller(ctx context.Context) {
	for ctx.Err() == nil {
		if q.m.isPaused() {
			sleep(ctx, q.interval)
			continue
		}
		msgs, err := q.m.svc.messages()
		if err != nil {
			sleep(ctx, q.interval)
			continue
		}
		batch := q.collect(ctx, msgs)
		if len(batch) > 0 {
			q.process(ctx, msgs, batch)
		}
	}
}

// collect receives a batch: up to BatchSize messages, waiting up to the
// batching window once the first arrives, within the 6 MB payload limit.
// Messages that match no filter are deleted, as Lambda deletes them.
func (q *queueRun) collect(ctx context.Context, msgs QueueMessages) []queueRecord {
	st, m := q.settings, q.m
	if err := q.authorize("sqs:ReceiveMessage"); err != nil {
		m.setResult(ResultQueueAccess)
		sleep(ctx, q.interval)
		return nil
	}
	var batch []queueRecord
	size := 0
	var deadline time.Time
	for len(batch) < st.BatchSize && size < maxPayloadBytes {
		wait := q.interval
		if len(batch) > 0 {
			if st.MaximumBatchingWindowInSeconds == 0 {
				break
			}
			wait = min(wait, time.Until(deadline))
			if wait <= 0 {
				break
			}
		}
		m.counters.polls.Add(1)
		got, err := msgs.Receive(ctx, st.EventSourceArn, min(st.BatchSize-len(batch), maxFIFOBatch), wait)
		if err != nil {
			m.setResult(ResultQueueNotFound)
			return batch
		}
		if len(got) == 0 && len(batch) == 0 {
			return nil
		}
		m.emit(st, MetricPolled, len(got))
		if len(batch) == 0 && len(got) > 0 {
			deadline = time.Now().Add(time.Duration(st.MaximumBatchingWindowInSeconds) * time.Second)
		}
		for _, r := range got {
			m.counters.read.Add(1)
			rec := queueRecord{msg: r, json: q.record(r)}
			if !q.matches(rec) {
				m.counters.filtered.Add(1)
				m.emit(st, MetricFilteredOut, 1)
				_ = q.delete(msgs, rec)
				continue
			}
			size += len(rec.json) + 1
			batch = append(batch, rec)
		}
	}
	return batch
}

// process invokes the function with a batch and settles it: every message
// is deleted on success; none is on an error (they become visible again
// when their visibility timeout ends); with ReportBatchItemFailures all but
// the reported ones are, and an unusable report fails the whole batch.
func (q *queueRun) process(ctx context.Context, msgs QueueMessages, batch []queueRecord) {
	m := q.m
	fns, err := m.svc.functions()
	if err != nil {
		return
	}
	m.counters.invocations.Add(1)
	m.emit(q.settings, MetricInvoked, len(batch))
	out, fnErr, err := fns.InvokeSync(ctx, q.settings.FunctionArn, queuePayload(batch))
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		m.counters.invokeErrors.Add(1)
		m.emit(q.settings, MetricFailedInvoke, len(batch))
		m.setResult(ResultFunctionFailed)
		return
	case fnErr != "":
		m.counters.fnErrors.Add(1)
		m.emit(q.settings, MetricFailedInvoke, len(batch))
		m.setResult(ResultFunctionFailed)
		return
	}
	keep := map[int]bool{}
	if q.settings.reportBatchItemFailures() {
		ids := make([]string, len(batch))
		for i, r := range batch {
			ids[i] = r.msg.MessageID
		}
		failed, ok := failedItems(out, ids)
		if !ok {
			m.counters.fnErrors.Add(1)
			m.emit(q.settings, MetricFailedInvoke, len(batch))
			m.setResult(ResultFunctionFailed)
			return
		}
		if len(failed) > 0 {
			m.counters.partial.Add(1)
			m.emit(q.settings, MetricFailedInvoke, len(failed))
		}
		for _, i := range failed {
			keep[i] = true
		}
	}
	for i, r := range batch {
		if !keep[i] && q.delete(msgs, r) {
			m.counters.succeeded.Add(1)
			m.emit(q.settings, MetricDeleted, 1)
		}
	}
	m.setResult(ResultOK)
}

// delete deletes a received message; it reports whether it could.
func (q *queueRun) delete(msgs QueueMessages, r queueRecord) bool {
	if err := q.authorize("sqs:DeleteMessage"); err != nil {
		q.m.setResult(ResultQueueAccess)
		return false
	}
	if err := msgs.DeleteReceived(q.settings.EventSourceArn, r.msg.ReceiptHandle); err != nil {
		q.m.svc.env.Logger.Warn("event source mapping could not delete a message", "uuid", q.m.uuid, "queue", q.settings.EventSourceArn, "error", err)
		return false
	}
	return true
}

// authorize checks the function's role may do action on the queue.
func (q *queueRun) authorize(action string) error {
	fns, err := q.m.svc.functions()
	if err != nil {
		return err
	}
	base, _ := splitQualifier(q.settings.FunctionArn)
	_, role, _, ok := fns.FunctionInfo(base)
	if !ok {
		return nil
	}
	return q.m.svc.authorizeRole(role, action, q.settings.EventSourceArn)
}

// matches applies the filters to a record whose body, when it is JSON, is
// matched as JSON ("Filtering Amazon SQS messages").
func (q *queueRun) matches(r queueRecord) bool {
	if len(q.settings.Filters) == 0 {
		return true
	}
	doc := r.json
	if json.Valid([]byte(r.msg.Body)) {
		var rec map[string]json.RawMessage
		if json.Unmarshal(r.json, &rec) == nil {
			rec["body"] = json.RawMessage(r.msg.Body)
			if b, err := json.Marshal(rec); err == nil {
				doc = b
			}
		}
	}
	for _, mt := range q.matchers {
		if mt.Matches(doc) {
			return true
		}
	}
	return false
}

// record renders a message as Lambda delivers it.
func (q *queueRun) record(r sqs.Received) []byte {
	return sqsRecord(r, q.m.svc.env.Region, q.settings.EventSourceArn)
}

// compileFilters compiles a mapping's filter patterns (checked when set).
func compileFilters(s *Service, filters []string) []Matcher {
	var out []Matcher
	for _, f := range filters {
		if s.cfg.Compile == nil {
			break
		}
		if mt, err := s.cfg.Compile(f); err == nil {
			out = append(out, mt)
		}
	}
	return out
}

func queuePayload(batch []queueRecord) []byte {
	recs := make([]json.RawMessage, len(batch))
	for i, r := range batch {
		recs[i] = r.json
	}
	b, _ := json.Marshal(map[string][]json.RawMessage{"Records": recs})
	return b
}

// ResultQueueAccess and ResultQueueNotFound are queue mappings' problems.
const (
	ResultQueueAccess   = "PROBLEM: Lambda was unable to receive from or delete in the queue: the execution role is not authorized."
	ResultQueueNotFound = "PROBLEM: Queue not found."
)

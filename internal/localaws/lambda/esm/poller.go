package esm

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Results reported in LastProcessingResult.
const (
	ResultNone             = "No records processed"
	ResultOK               = "OK"
	ResultFunctionFailed   = "PROBLEM: Function call failed"
	ResultFunctionNotFound = "PROBLEM: Function not found."
	ResultStreamAccess     = "PROBLEM: Lambda was unable to read the stream: the execution role is not authorized."
	ResultStreamNotFound   = "PROBLEM: Stream not found."
	ResultDestination      = "PROBLEM: Lambda could not send the on-failure record to the destination."
)

// Counters count what a mapping's poller did.
type Counters struct {
	Polls            int64 `json:"polls"`
	RecordsRead      int64 `json:"recordsRead"`
	RecordsFiltered  int64 `json:"recordsFiltered"`
	RecordsTrimmed   int64 `json:"trimEvents"`
	Invocations      int64 `json:"invocations"`
	FunctionErrors   int64 `json:"functionErrors"`
	InvokeErrors     int64 `json:"invokeErrors"`
	PartialFailures  int64 `json:"partialFailures"`
	Bisects          int64 `json:"bisects"`
	RecordsSucceeded int64 `json:"recordsSucceeded"`
	RecordsExpired   int64 `json:"recordsExpired"`
	RetriesExhausted int64 `json:"retriesExhausted"`
	OnFailureSent    int64 `json:"onFailureSent"`
	OnFailureErrors  int64 `json:"onFailureErrors"`
}

type counters struct {
	polls, read, filtered, trimmed, invocations, fnErrors, invokeErrors, partial, bisects,
	succeeded, expired, exhausted, onFailureSent, onFailureErrors atomic.Int64
}

func (c *counters) snapshot() Counters {
	return Counters{
		Polls: c.polls.Load(), RecordsRead: c.read.Load(), RecordsFiltered: c.filtered.Load(),
		RecordsTrimmed: c.trimmed.Load(), Invocations: c.invocations.Load(), FunctionErrors: c.fnErrors.Load(),
		InvokeErrors: c.invokeErrors.Load(), PartialFailures: c.partial.Load(), Bisects: c.bisects.Load(),
		RecordsSucceeded: c.succeeded.Load(), RecordsExpired: c.expired.Load(), RetriesExhausted: c.exhausted.Load(),
		OnFailureSent: c.onFailureSent.Load(), OnFailureErrors: c.onFailureErrors.Load(),
	}
}

// shardCheckpoint is what a mapping keeps of a shard across pollers
// (disable and enable resume from it).
type shardCheckpoint struct {
	// checkpoint is the sequence number of the last record processed
	// ("" before any).
	checkpoint string
	// started is true once the starting position was resolved.
	started  bool
	finished bool
}

type mapping struct {
	svc  *Service
	uuid string
	arn  string

	mu           sync.Mutex
	settings     Settings
	state        string
	reason       string
	lastResult   string
	lastModified time.Time
	generation   int
	paused       bool
	positioned   bool
	shards       map[string]*shardCheckpoint
	shardOrder   []string
	run          *pollerRun
	cancel       context.CancelFunc
	done         chan struct{}

	counters counters
}

func newMapping(s *Service, uuid string, st Settings) *mapping {
	return &mapping{
		svc:          s,
		uuid:         uuid,
		arn:          s.env.ARN("lambda", "event-source-mapping:"+uuid),
		settings:     st,
		state:        StateCreating,
		reason:       "User action",
		lastResult:   ResultNone,
		lastModified: s.env.Time(),
		shards:       map[string]*shardCheckpoint{},
	}
}

// scheduleTransition moves a transient state to target after the
// transition delay, unless another change came first, and starts or stops
// the poller accordingly.
func (m *mapping) scheduleTransition(target string) {
	m.mu.Lock()
	gen := m.generation
	m.mu.Unlock()
	m.svc.afterTransition(func() {
		m.mu.Lock()
		if m.generation != gen || m.state == StateDeleting {
			m.mu.Unlock()
			return
		}
		m.state = target
		m.mu.Unlock()
		// Restart so that new settings apply to a fresh poller; the
		// checkpoint survives.
		m.stopPoller()
		if target == StateEnabled {
			m.startPoller()
		}
	})
}

func (m *mapping) startPoller() {
	m.svc.mu.Lock()
	closed := m.svc.closed
	m.svc.mu.Unlock()
	if closed {
		return
	}
	m.mu.Lock()
	if m.cancel != nil {
		m.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(m.svc.Context())
	done := make(chan struct{})
	st := m.settings
	m.cancel, m.done = cancel, done
	m.mu.Unlock()
	m.svc.Go(func() {
		defer close(done)
		st.kind.run(ctx, m, st)
	})
}

func (m *mapping) stopPoller() {
	m.mu.Lock()
	cancel, done := m.cancel, m.done
	m.cancel, m.done, m.run = nil, nil, nil
	m.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
		m.mu.Lock()
		if m.cancel == nil {
			m.run = nil
		}
		m.mu.Unlock()
	}
}

func (m *mapping) setResult(r string) {
	m.mu.Lock()
	m.lastResult = r
	m.mu.Unlock()
}

func (m *mapping) isPaused() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.paused
}

// pollerRun is one run of a mapping's poller, with fixed settings.
type pollerRun struct {
	m        *mapping
	settings Settings
	matchers []Matcher
	interval time.Duration

	mu     sync.Mutex
	shards map[string]*shardRun
	wg     sync.WaitGroup
}

// pendingRecord is a record read from a shard and not yet checkpointed.
type pendingRecord struct {
	rec   StreamRecord
	json  []byte
	done  bool
	shard *shardRun
}

type shardRun struct {
	id       string
	cp       *shardCheckpoint
	readPos  string
	closed   bool
	pending  []*pendingRecord
	lanes    []*lane
	inFlight int
}

type lane struct {
	mu     sync.Mutex
	queue  []*pendingRecord
	since  time.Time // when the oldest queued record was queued
	signal chan struct{}
}

// push queues the records of one read at once, so that a lane never
// takes part of a read as a batch.
func (l *lane) push(recs []*pendingRecord, now time.Time) {
	if len(recs) == 0 {
		return
	}
	l.mu.Lock()
	if len(l.queue) == 0 {
		l.since = now
	}
	l.queue = append(l.queue, recs...)
	l.mu.Unlock()
	l.wake()
}

// wake tells the lane that records were queued; a read queues all its
// records first so that they make one batch.
func (l *lane) wake() {
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

func (p *pollerRun) loop(ctx context.Context) {
	m := p.m
	for _, f := range p.settings.Filters {
		if m.svc.cfg.Compile == nil {
			break
		}
		if mt, err := m.svc.cfg.Compile(f); err == nil {
			p.matchers = append(p.matchers, mt)
		}
	}
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.poll(ctx)
		select {
		case <-ctx.Done():
			p.wg.Wait()
			return
		case <-t.C:
		}
	}
}

func (p *pollerRun) now() time.Time { return p.m.svc.env.Time() }

// poll is one poll of every readable shard.
func (p *pollerRun) poll(ctx context.Context) {
	m := p.m
	if ctx.Err() != nil || m.isPaused() {
		return
	}
	m.counters.polls.Add(1)
	streams, err := m.svc.streams()
	if err != nil {
		return
	}
	fns, err := m.svc.functions()
	if err != nil {
		return
	}
	base, _ := splitQualifier(p.settings.FunctionArn)
	_, role, _, ok := fns.FunctionInfo(base)
	if ok {
		if err := m.svc.authorizeRole(role, "dynamodb:GetRecords", p.settings.EventSourceArn); err != nil {
			m.setResult(ResultStreamAccess)
			return
		}
	}
	if !streams.StreamExists(p.settings.EventSourceArn) {
		m.setResult(ResultStreamNotFound)
		return
	}
	shards, err := streams.Shards(p.settings.EventSourceArn)
	if err != nil {
		return
	}
	if !p.position(shards, streams) {
		return
	}
	listed := make(map[string]bool, len(shards))
	for _, sh := range shards {
		listed[sh.ID] = true
	}
	for _, sh := range shards {
		if ctx.Err() != nil {
			return
		}
		sr := p.shard(ctx, sh, listed)
		if sr == nil {
			continue
		}
		p.read(sr, streams)
	}
}

// position resolves the starting position on the mapping's first poll:
// LATEST starts after the newest record of each open shard (closed shards
// are skipped); TRIM_HORIZON starts at the oldest record.
func (p *pollerRun) position(shards []Shard, streams Streams) bool {
	m := p.m
	m.mu.Lock()
	done := m.positioned
	m.mu.Unlock()
	if done {
		return true
	}
	latest := map[string]string{}
	if p.settings.StartingPosition == "LATEST" {
		for _, sh := range shards {
			if sh.Closed {
				continue
			}
			seq, err := streams.LatestSequenceNumber(p.settings.EventSourceArn, sh.ID)
			if err != nil {
				return false
			}
			latest[sh.ID] = seq
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.settings.StartingPosition == "LATEST" {
		for _, sh := range shards {
			cp := &shardCheckpoint{started: true}
			if sh.Closed {
				cp.finished = true
			} else {
				cp.checkpoint = latest[sh.ID]
			}
			m.shards[sh.ID] = cp
			m.shardOrder = append(m.shardOrder, sh.ID)
		}
	}
	m.positioned = true
	return true
}

// shard returns the run state of a shard, creating it (and resolving the
// starting position) when its parent is done; nil when it is not readable.
// A parent no longer listed (trimmed after the retention) is done.
func (p *pollerRun) shard(ctx context.Context, sh Shard, listed map[string]bool) *shardRun {
	m := p.m
	p.mu.Lock()
	sr, ok := p.shards[sh.ID]
	p.mu.Unlock()
	if ok {
		p.mu.Lock()
		sr.closed = sh.Closed
		p.mu.Unlock()
		return sr
	}
	m.mu.Lock()
	cp, ok := m.shards[sh.ID]
	if !ok {
		cp = &shardCheckpoint{}
		m.shards[sh.ID] = cp
		m.shardOrder = append(m.shardOrder, sh.ID)
	}
	if cp.finished {
		m.mu.Unlock()
		return nil
	}
	if sh.ParentID != "" && listed[sh.ParentID] {
		if parent, ok := m.shards[sh.ParentID]; !ok || !parent.finished {
			m.mu.Unlock()
			return nil
		}
	}
	cp.started = true
	sr = &shardRun{id: sh.ID, cp: cp, readPos: cp.checkpoint, closed: sh.Closed}
	m.mu.Unlock()
	n := max(p.settings.ParallelizationFactor, 1)
	for i := 0; i < n; i++ {
		l := &lane{signal: make(chan struct{}, 1)}
		sr.lanes = append(sr.lanes, l)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.laneLoop(ctx, sr, l)
		}()
	}
	p.mu.Lock()
	p.shards[sh.ID] = sr
	p.mu.Unlock()
	return sr
}

// read reads the next records of a shard into its lanes.
func (p *pollerRun) read(sr *shardRun, streams Streams) {
	m := p.m
	limit := maxGetRecords
	p.mu.Lock()
	backlog := len(sr.pending)
	from := sr.readPos
	p.mu.Unlock()
	// Keep at most a few batches per lane in memory, like a poller that
	// reads only as fast as it processes.
	if backlog >= 2*p.settings.BatchSize*len(sr.lanes) && backlog >= maxGetRecords {
		return
	}
	recs, trimmed, err := streams.Records(p.settings.EventSourceArn, sr.id, from, limit)
	if err != nil {
		return
	}
	now := p.now()
	p.mu.Lock()
	if sr.readPos != from {
		p.mu.Unlock()
		return
	}
	if trimmed {
		m.counters.trimmed.Add(1)
		if len(sr.pending) == 0 {
			// Nothing in memory: the checkpoint moves to the trim horizon.
			sr.cp.checkpoint = ""
		}
	}
	perLane := make([][]*pendingRecord, len(sr.lanes))
	m.emit(p.settings, MetricPolled, len(recs))
	for _, r := range recs {
		pr := &pendingRecord{rec: r, shard: sr, json: lambdaRecord(r, m.svc.env.Region, p.settings.EventSourceArn)}
		m.counters.read.Add(1)
		sr.pending = append(sr.pending, pr)
		sr.readPos = r.SequenceNumber
		if !p.matches(pr.json) {
			pr.done = true
			m.counters.filtered.Add(1)
			m.emit(p.settings, MetricFilteredOut, 1)
			continue
		}
		sr.inFlight++
		key := r.PartitionKey
		if key == "" {
			key = string(r.Keys)
		}
		i := laneIndex(key, len(sr.lanes))
		perLane[i] = append(perLane[i], pr)
	}
	p.advanceLocked(sr)
	for i, l := range sr.lanes {
		l.push(perLane[i], now)
	}
	if sr.closed && len(recs) == 0 && len(sr.pending) == 0 {
		m.mu.Lock()
		sr.cp.finished = true
		m.mu.Unlock()
	}
	p.mu.Unlock()
}

func (p *pollerRun) matches(rec []byte) bool {
	if len(p.settings.Filters) == 0 {
		return true
	}
	for _, mt := range p.matchers {
		if mt.Matches(rec) {
			return true
		}
	}
	return false
}

func laneIndex(key string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// advanceLocked moves the checkpoint past the leading processed records;
// p.mu must be held.
func (p *pollerRun) advanceLocked(sr *shardRun) {
	i := 0
	for i < len(sr.pending) && sr.pending[i].done {
		i++
	}
	if i == 0 {
		return
	}
	last := sr.pending[i-1].rec.SequenceNumber
	sr.pending = append(sr.pending[:0:0], sr.pending[i:]...)
	p.m.mu.Lock()
	sr.cp.checkpoint = last
	p.m.mu.Unlock()
}

// finish marks records processed and advances the checkpoint.
func (p *pollerRun) finish(recs []*pendingRecord) {
	if len(recs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	sr := recs[0].shard
	for _, r := range recs {
		if !r.done {
			r.done = true
			sr.inFlight--
		}
	}
	p.advanceLocked(sr)
}

// sleep waits d or until ctx is done; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool { return awsapi.Sleep(ctx, d) }

func (p *pollerRun) laneLoop(ctx context.Context, sr *shardRun, l *lane) {
	window := time.Duration(p.settings.MaximumBatchingWindowInSeconds) * time.Second
	for {
		l.mu.Lock()
		n, since := len(l.queue), l.since
		l.mu.Unlock()
		if n == 0 {
			select {
			case <-ctx.Done():
				return
			case <-l.signal:
			}
			continue
		}
		if window > 0 && n < p.settings.BatchSize {
			if wait := window - p.now().Sub(since); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-l.signal:
					t.Stop()
					continue
				case <-t.C:
				}
			}
		}
		for p.m.isPaused() {
			if !sleep(ctx, p.interval) {
				return
			}
		}
		l.mu.Lock()
		size := 0
		k := 0
		for k < len(l.queue) && k < p.settings.BatchSize {
			size += len(l.queue[k].json) + 1
			if k > 0 && size > maxPayloadBytes-64 {
				break
			}
			k++
		}
		batch := append([]*pendingRecord(nil), l.queue[:k]...)
		l.queue = append(l.queue[:0:0], l.queue[k:]...)
		l.since = p.now()
		l.mu.Unlock()
		if !p.process(ctx, sr.id, batch) {
			return
		}
	}
}

// functionFailed counts a function error on batch. With
// BisectBatchOnFunctionError and more than one record, the two halves are
// processed in its place: bisected is true and ok their outcome.
func (p *pollerRun) functionFailed(ctx context.Context, shardID string, batch []*pendingRecord) (ok, bisected bool) {
	p.m.counters.fnErrors.Add(1)
	p.m.emit(p.settings, MetricFailedInvoke, len(batch))
	p.m.setResult(ResultFunctionFailed)
	if !p.settings.BisectBatchOnFunctionError || len(batch) < 2 {
		return false, false
	}
	p.m.counters.bisects.Add(1)
	half := len(batch) / 2
	return p.process(ctx, shardID, batch[:half]) && p.process(ctx, shardID, batch[half:]), true
}

// process delivers one batch until it succeeds or is discarded. It returns
// false when ctx ended first (the records stay unprocessed and are read
// again from the checkpoint by the next poller).
func (p *pollerRun) process(ctx context.Context, shardID string, batch []*pendingRecord) bool {
	d := &delivery{p: p, shardID: shardID, batch: batch}
	for len(d.batch) > 0 {
		if ctx.Err() != nil || !p.waitUnpaused(ctx) {
			return false
		}
		if d.dropExpired() {
			continue
		}
		if fns, ok := p.target(); ok {
			if done, ok := d.invoke(ctx, fns); done {
				return ok
			}
		}
		if !sleep(ctx, p.interval) {
			return false
		}
	}
	return true
}

// waitUnpaused waits while the mapping is paused. It returns false when
// ctx ended first.
func (p *pollerRun) waitUnpaused(ctx context.Context) bool {
	for p.m.isPaused() {
		if !sleep(ctx, p.interval) {
			return false
		}
	}
	return true
}

// target returns the functions service when the mapping's function
// exists; otherwise the batch waits for it.
func (p *pollerRun) target() (Functions, bool) {
	fns, err := p.m.svc.functions()
	if err != nil {
		return nil, false
	}
	if _, _, _, ok := fns.FunctionInfo(p.functionBase()); !ok {
		p.m.setResult(ResultFunctionNotFound)
		return nil, false
	}
	return fns, true
}

// functionBase is the mapping's function ARN without its qualifier.
func (p *pollerRun) functionBase() string {
	base, _ := splitQualifier(p.settings.FunctionArn)
	return base
}

// delivery is one batch on its way to the function: the records not yet
// delivered, the invocations so far and the last response.
type delivery struct {
	p       *pollerRun
	shardID string
	batch   []*pendingRecord
	invokes int
	resp    lastResponse
}

// dropExpired discards the leading records older than
// MaximumRecordAgeInSeconds and reports whether there were any.
func (d *delivery) dropExpired() bool {
	st := d.p.settings
	if st.MaximumRecordAgeInSeconds < 0 {
		return false
	}
	maxAge := time.Duration(st.MaximumRecordAgeInSeconds) * time.Second
	now := d.p.now()
	k := 0
	for k < len(d.batch) && now.Sub(d.batch[k].rec.ApproximateCreationDateTime) > maxAge {
		k++
	}
	if k == 0 {
		return false
	}
	d.p.m.counters.expired.Add(int64(k))
	d.p.discard(d.shardID, ConditionRecordAgeExceeded, d.invokes, d.resp, d.batch[:k])
	d.batch = d.batch[k:]
	return true
}

// invoke calls the function once with the batch. done reports that the
// batch is settled, with ok as process returns it; otherwise the records
// left are tried again after the poll interval.
func (d *delivery) invoke(ctx context.Context, fns Functions) (done, ok bool) {
	p, m := d.p, d.p.m
	payload := eventPayload(d.batch)
	m.counters.invocations.Add(1)
	m.emit(p.settings, MetricInvoked, len(d.batch))
	d.invokes++
	d.resp = lastResponse{requestID: awsapi.NewUUID(), statusCode: 200}
	out, fnErr, err := fns.InvokeSync(ctx, p.settings.FunctionArn, payload)
	switch {
	case ctx.Err() != nil:
		return true, false
	case err != nil:
		return d.invokeFailed(fns, err)
	case fnErr != "":
		d.resp.functionError = fnErr
		return d.functionFailed(ctx)
	case p.settings.reportBatchItemFailures():
		lowest, valid := batchItemFailures(out, d.batch)
		if !valid {
			return d.functionFailed(ctx)
		}
		if lowest >= 0 {
			m.counters.partial.Add(1)
			m.emit(p.settings, MetricFailedInvoke, len(d.batch)-lowest)
			d.succeeded(lowest)
			return d.retryOrDiscard()
		}
	}
	d.succeeded(len(d.batch))
	return true, true
}

// succeeded finishes the first n records of the batch.
func (d *delivery) succeeded(n int) {
	d.p.m.counters.succeeded.Add(int64(n))
	d.p.finish(d.batch[:n])
	d.batch = d.batch[n:]
	d.p.m.setResult(ResultOK)
}

// invokeFailed handles an Invoke call that failed. An invocation of a
// function deleted meanwhile does not count as an attempt.
func (d *delivery) invokeFailed(fns Functions, err error) (done, ok bool) {
	m := d.p.m
	m.counters.invokeErrors.Add(1)
	m.emit(d.p.settings, MetricFailedInvoke, len(d.batch))
	d.resp.statusCode = statusOf(err)
	if _, _, _, found := fns.FunctionInfo(d.p.functionBase()); !found {
		m.setResult(ResultFunctionNotFound)
		d.invokes--
		return false, false
	}
	m.setResult(ResultFunctionFailed)
	return d.retryOrDiscard()
}

// functionFailed handles a function error: the batch is bisected, or
// retried.
func (d *delivery) functionFailed(ctx context.Context) (done, ok bool) {
	if ok, bisected := d.p.functionFailed(ctx, d.shardID, d.batch); bisected {
		return true, ok
	}
	return d.retryOrDiscard()
}

// retryOrDiscard follows a failed attempt: the batch is discarded once
// MaximumRetryAttempts is spent, and tried again otherwise.
func (d *delivery) retryOrDiscard() (done, ok bool) {
	st := d.p.settings
	if st.MaximumRetryAttempts >= 0 && d.invokes > st.MaximumRetryAttempts {
		d.p.m.counters.exhausted.Add(1)
		d.p.discard(d.shardID, ConditionRetryAttemptsExhausted, d.invokes, d.resp, d.batch)
		return true, true
	}
	return false, false
}

func statusOf(err error) int {
	var e *awsapi.Error
	if errors.As(err, &e) {
		return e.Status()
	}
	return 500
}

// discard sends the on-failure record for recs (when a destination is
// set) and moves past them.
func (p *pollerRun) discard(shardID, condition string, invokes int, resp lastResponse, recs []*pendingRecord) {
	m := p.m
	st := p.settings
	m.emit(st, MetricDropped, len(recs))
	if st.OnFailureDestination != "" {
		rec := onFailureRecord(p.now(), st.FunctionArn, st.EventSourceArn, shardID, condition, invokes, resp, recs)
		body, _ := json.Marshal(rec)
		if err := p.sendOnFailure(string(body)); err != nil {
			m.counters.onFailureErrors.Add(1)
			m.setResult(ResultDestination)
			m.svc.env.Logger.Warn("event source mapping could not send an on-failure record", "uuid", m.uuid, "destination", st.OnFailureDestination, "error", err)
		} else {
			m.counters.onFailureSent.Add(1)
			m.emit(st, MetricOnFailureDelivered, len(recs))
		}
	}
	p.finish(recs)
}

func (p *pollerRun) sendOnFailure(body string) error {
	m := p.m
	st := p.settings
	fns, err := m.svc.functions()
	if err != nil {
		return err
	}
	if m.svc.cfg.Queues == nil {
		return awsapi.ServiceUnavailable("the sqs service is not available")
	}
	q, err := m.svc.cfg.Queues()
	if err != nil {
		return err
	}
	base, _ := splitQualifier(st.FunctionArn)
	if _, role, _, ok := fns.FunctionInfo(base); ok {
		if err := m.svc.authorizeRole(role, "sqs:SendMessage", st.OnFailureDestination); err != nil {
			return err
		}
		// SQS asks KMS for the queue's key on behalf of the sender: the
		// function's execution role.
		if err := q.AuthorizeSender(m.svc.rolePrincipal(role), st.OnFailureDestination); err != nil {
			return err
		}
	}
	_, err = q.Deliver(st.OnFailureDestination, body, nil)
	return err
}

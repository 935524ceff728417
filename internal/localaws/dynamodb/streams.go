package dynamodb

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Record is one DynamoDB Streams record, in the JSON shape GetRecords
// returns.
type Record struct {
	AwsRegion    string        `json:"awsRegion"`
	Dynamodb     StreamRecord  `json:"dynamodb"`
	EventID      string        `json:"eventID"`
	EventName    string        `json:"eventName"`
	EventSource  string        `json:"eventSource"`
	EventVersion string        `json:"eventVersion"`
	UserIdentity *UserIdentity `json:"userIdentity,omitempty"`
}

// StreamRecord is the "dynamodb" member of a Record.
type StreamRecord struct {
	// ApproximateCreationDateTime is in epoch seconds, rounded down.
	ApproximateCreationDateTime int64  `json:"ApproximateCreationDateTime"`
	Keys                        Item   `json:"Keys"`
	NewImage                    Item   `json:"NewImage,omitempty"`
	OldImage                    Item   `json:"OldImage,omitempty"`
	SequenceNumber              string `json:"SequenceNumber"`
	SizeBytes                   int64  `json:"SizeBytes"`
	StreamViewType              string `json:"StreamViewType"`
}

// UserIdentity is set on records of deletions made by the TTL process. In
// GetRecords its members are PrincipalId and Type; the Lambda event spells
// them principalId and type (see LambdaRecord).
type UserIdentity struct {
	PrincipalID string `json:"PrincipalId"`
	Type        string `json:"Type"`
}

// LambdaRecord is a stream record as Lambda delivers it to a function in
// the event's Records array.
type LambdaRecord struct {
	EventID        string              `json:"eventID"`
	EventName      string              `json:"eventName"`
	EventVersion   string              `json:"eventVersion"`
	EventSource    string              `json:"eventSource"`
	AwsRegion      string              `json:"awsRegion"`
	Dynamodb       StreamRecord        `json:"dynamodb"`
	UserIdentity   *LambdaUserIdentity `json:"userIdentity,omitempty"`
	EventSourceARN string              `json:"eventSourceARN"`
}

// LambdaUserIdentity is the userIdentity of a Lambda event record.
type LambdaUserIdentity struct {
	Type        string `json:"type"`
	PrincipalID string `json:"principalId"`
}

// ForLambda returns the record in the Lambda event shape for the stream
// streamArn.
func (r Record) ForLambda(streamArn string) LambdaRecord {
	l := LambdaRecord{
		EventID: r.EventID, EventName: r.EventName, EventVersion: r.EventVersion, EventSource: r.EventSource,
		AwsRegion: r.AwsRegion, Dynamodb: r.Dynamodb, EventSourceARN: streamArn,
	}
	if r.UserIdentity != nil {
		l.UserIdentity = &LambdaUserIdentity{Type: r.UserIdentity.Type, PrincipalID: r.UserIdentity.PrincipalID}
	}
	return l
}

// Stream statuses.
const (
	StreamEnabled  = "ENABLED"
	StreamDisabled = "DISABLED"
)

// StreamInfo describes a stream for in-process consumers.
type StreamInfo struct {
	StreamArn      string
	StreamLabel    string
	TableName      string
	TableArn       string
	StreamViewType string
	StreamStatus   string
	// HashKey is the table's partition key attribute: records of one
	// partition key value stay in order.
	HashKey string
	// ShardID is the first shard taking records (the newest shard once the
	// stream is disabled); Shards lists them all.
	ShardID string
	// Created is when the stream was enabled; Disabled when it was
	// disabled (zero while enabled).
	Created  time.Time
	Disabled time.Time
	// TrimHorizon is the sequence number of the oldest retained record,
	// "" when there is none.
	TrimHorizon string
	// Latest is the sequence number of the newest record, "" when there
	// is none.
	Latest string
}

// ShardInfo describes one shard of a stream.
type ShardInfo struct {
	ShardID string
	// ParentShardID is the shard this one continues after a rollover, ""
	// for the stream's first shards.
	ParentShardID          string
	StartingSequenceNumber string
	// EndingSequenceNumber is set once the shard is closed (rollover or
	// a disabled stream): it takes no more records.
	EndingSequenceNumber string
	Closed               bool
	// Latest is the sequence number of the shard's newest record, "" when
	// it has none.
	Latest string
}

type storedRecord struct {
	seq uint64
	at  time.Time
	rec Record
}

// shard holds the records of the partition keys that hash to it while it
// is open.
type shard struct {
	id, parentID   string
	startSeq       uint64 // first sequence number the shard may hold
	endSeq         uint64 // set when the shard closes; 0 while open
	closedAt       time.Time
	records        []storedRecord
	trimmedThrough uint64 // highest trimmed sequence number
}

type stream struct {
	arn, label, table, tableArn, viewType string
	hashKey                               string // the table's partition key attribute
	created, disabled                     time.Time
	shards                                []*shard // every listed shard, parents before children
	open                                  []*shard // the shards taking records; nil once disabled
	openedAt                              time.Time
	changed                               chan struct{}
}

// Streams is the stream store. Its exported methods are the in-process API
// for other packages of the stack (see the package documentation).
type Streams struct {
	env       *awsapi.Env
	retention time.Duration
	// shardCount is how many shards take records at once; lifetime is how
	// long they do before they close and child shards open (0: never).
	shardCount int
	lifetime   time.Duration

	mu      sync.Mutex
	seq     uint64
	streams map[string]*stream
}

func newStreams(env *awsapi.Env, retention time.Duration, shardCount int, lifetime time.Duration) *Streams {
	return &Streams{env: env, retention: retention, shardCount: max(shardCount, 1), lifetime: lifetime,
		streams: map[string]*stream{}, seq: uint64(env.Time().Unix()) * 1_000_000}
}

// seqWidth keeps sequence numbers fixed-width so they compare as strings.
const seqWidth = 21

func formatSeq(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for len(s) < seqWidth {
		s = "0" + s
	}
	return s
}

func parseSeq(s string) (uint64, error) {
	if len(s) < 1 || len(s) > 40 {
		return 0, fmt.Errorf("invalid sequence number %q", s)
	}
	return strconv.ParseUint(s, 10, 64)
}

// CompareSequenceNumbers compares two sequence numbers numerically.
func CompareSequenceNumbers(a, b string) int {
	x, _ := parseSeq(a)
	y, _ := parseSeq(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// create starts a new enabled stream for a table whose partition key is
// hashKey. Its label is the creation time with millisecond precision,
// unique per table.
func (s *Streams) create(table, tableArn, hashKey, viewType string, prevLabel string) *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.env.Time().UTC()
	label := now.Format("2006-01-02T15:04:05.000")
	for label <= prevLabel || s.streams[tableArn+"/stream/"+label] != nil {
		now = now.Add(time.Millisecond)
		label = now.Format("2006-01-02T15:04:05.000")
	}
	st := &stream{
		arn:      tableArn + "/stream/" + label,
		label:    label,
		table:    table,
		tableArn: tableArn,
		viewType: viewType,
		hashKey:  hashKey,
		created:  now,
		openedAt: now,
		changed:  make(chan struct{}),
	}
	for range s.shardCount {
		st.open = append(st.open, s.newShardLocked(""))
	}
	st.shards = append(st.shards, st.open...)
	s.streams[st.arn] = st
	return st
}

func (s *Streams) newShardLocked(parentID string) *shard {
	return &shard{
		id:       fmt.Sprintf("shardId-%020d-%s", s.env.Time().UnixMilli(), awsapi.RandomHex(4)),
		parentID: parentID,
		startSeq: s.seq + 1,
	}
}

// closeLocked closes a shard: its ending sequence number is its last
// record's, or a number of its own when it holds none.
func (s *Streams) closeLocked(sh *shard) {
	if n := len(sh.records); n > 0 {
		sh.endSeq = sh.records[n-1].seq
	} else {
		s.seq++
		sh.endSeq = s.seq
	}
	sh.closedAt = s.env.Time()
}

// rollLocked closes the open shards of a stream once their lifetime has
// passed and opens one child for each: a partition key goes to the child of
// the shard it went to, so its records stay in order across the rollover
// for a reader that finishes a parent before its child.
func (s *Streams) rollLocked(st *stream) {
	if s.lifetime <= 0 || !st.disabled.IsZero() || s.env.Time().Sub(st.openedAt) < s.lifetime {
		return
	}
	for i, sh := range st.open {
		s.closeLocked(sh)
		child := s.newShardLocked(sh.id)
		st.open[i] = child
		st.shards = append(st.shards, child)
	}
	st.openedAt = s.env.Time()
	st.notify()
}

// disable closes a stream: it stays readable until retention passes.
func (s *Streams) disable(arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.streams[arn]; ok && st.disabled.IsZero() {
		for _, sh := range st.open {
			s.closeLocked(sh)
		}
		st.open = nil
		st.disabled = s.env.Time()
		st.notify()
	}
}

func (st *stream) notify() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// shardFor returns the open shard that takes the records of an item with
// these keys: by a hash of its partition key value, as DynamoDB does.
func (st *stream) shardFor(keys Item) *shard {
	if len(st.open) == 1 {
		return st.open[0]
	}
	h := fnv.New64a()
	_, _ = h.Write(canonical(Item{"": keys[st.hashKey]}))
	return st.open[h.Sum64()%uint64(len(st.open))]
}

// change is one item change to record.
type change struct {
	keys, oldImage, newImage Item
	ttl                      bool
}

// append records changes on a stream in order, skipping changes that
// changed nothing.
func (s *Streams) append(arn string, changes []change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streams[arn]
	if !ok || !st.disabled.IsZero() {
		return
	}
	s.rollLocked(st)
	now := s.env.Time()
	added := false
	for _, c := range changes {
		name := ""
		switch {
		case c.oldImage == nil && c.newImage != nil:
			name = "INSERT"
		case c.oldImage != nil && c.newImage == nil:
			name = "REMOVE"
		case c.oldImage != nil && c.newImage != nil:
			if equalItems(c.oldImage, c.newImage) {
				continue
			}
			name = "MODIFY"
		default:
			continue
		}
		s.seq++
		r := Record{
			AwsRegion:    s.env.Region,
			EventID:      awsapi.RandomHex(16),
			EventName:    name,
			EventSource:  "aws:dynamodb",
			EventVersion: "1.1",
			Dynamodb: StreamRecord{
				ApproximateCreationDateTime: now.Unix(),
				Keys:                        c.keys,
				SequenceNumber:              formatSeq(s.seq),
				StreamViewType:              st.viewType,
			},
		}
		size := itemSize(c.keys)
		if st.viewType == "NEW_IMAGE" || st.viewType == "NEW_AND_OLD_IMAGES" {
			r.Dynamodb.NewImage = c.newImage
			size += itemSize(c.newImage)
		}
		if st.viewType == "OLD_IMAGE" || st.viewType == "NEW_AND_OLD_IMAGES" {
			r.Dynamodb.OldImage = c.oldImage
			size += itemSize(c.oldImage)
		}
		r.Dynamodb.SizeBytes = int64(max(size, 1))
		if c.ttl {
			r.UserIdentity = &UserIdentity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}
		}
		sh := st.shardFor(c.keys)
		sh.records = append(sh.records, storedRecord{seq: s.seq, at: now, rec: r})
		added = true
	}
	if added {
		st.notify()
	}
}

// trimLocked drops records older than the retention, closed shards left
// empty longer than the retention, and streams disabled longer than the
// retention; it rolls shards whose lifetime passed. Callers hold s.mu.
func (s *Streams) trimLocked() {
	cutoff := s.env.Time().Add(-s.retention)
	for arn, st := range s.streams {
		if !st.disabled.IsZero() && st.disabled.Before(cutoff) {
			delete(s.streams, arn)
			continue
		}
		s.rollLocked(st)
		kept := st.shards[:0]
		for _, sh := range st.shards {
			i := sort.Search(len(sh.records), func(i int) bool { return !sh.records[i].at.Before(cutoff) })
			if i > 0 {
				sh.trimmedThrough = sh.records[i-1].seq
				sh.records = append([]storedRecord(nil), sh.records[i:]...)
			}
			if sh.endSeq == 0 || len(sh.records) > 0 || !sh.closedAt.Before(cutoff) {
				kept = append(kept, sh)
			}
		}
		st.shards = kept
	}
}

func (s *Streams) trim() {
	s.mu.Lock()
	s.trimLocked()
	s.mu.Unlock()
}

func (s *Streams) getLocked(arn string) (*stream, error) {
	s.trimLocked()
	st, ok := s.streams[arn]
	if !ok {
		return nil, awsapi.ResourceNotFoundException("Requested resource not found: Stream: %s not found", arn)
	}
	return st, nil
}

// shardLocked finds shard shardID of stream streamArn; s.mu is held.
func (s *Streams) shardLocked(streamArn, shardID string) (*stream, *shard, error) {
	st, err := s.getLocked(streamArn)
	if err != nil {
		return nil, nil, err
	}
	sh, err := st.shard(shardID)
	if err != nil {
		return nil, nil, err
	}
	return st, sh, nil
}

func (st *stream) shard(id string) (*shard, error) {
	for _, sh := range st.shards {
		if sh.id == id {
			return sh, nil
		}
	}
	return nil, awsapi.ResourceNotFoundException("Requested resource not found: Shard does not exist")
}

func (st *stream) info() StreamInfo {
	i := StreamInfo{
		StreamArn: st.arn, StreamLabel: st.label, TableName: st.table, TableArn: st.tableArn,
		StreamViewType: st.viewType, StreamStatus: StreamEnabled, HashKey: st.hashKey,
		Created: st.created, Disabled: st.disabled,
	}
	switch {
	case len(st.open) > 0:
		i.ShardID = st.open[0].id
	case len(st.shards) > 0:
		i.ShardID = st.shards[len(st.shards)-1].id
	}
	if !st.disabled.IsZero() {
		i.StreamStatus = StreamDisabled
	}
	var first, last uint64
	for _, sh := range st.shards {
		if n := len(sh.records); n > 0 {
			if first == 0 || sh.records[0].seq < first {
				first = sh.records[0].seq
			}
			last = max(last, sh.records[n-1].seq)
		}
	}
	if last > 0 {
		i.TrimHorizon, i.Latest = formatSeq(first), formatSeq(last)
	}
	return i
}

func (sh *shard) info() ShardInfo {
	i := ShardInfo{ShardID: sh.id, ParentShardID: sh.parentID, StartingSequenceNumber: formatSeq(max(sh.startSeq, sh.trimmedThrough+1))}
	if sh.endSeq > 0 {
		i.Closed, i.EndingSequenceNumber = true, formatSeq(sh.endSeq)
	}
	if n := len(sh.records); n > 0 {
		i.Latest = formatSeq(sh.records[n-1].seq)
	}
	return i
}

// Describe returns a stream's description.
func (s *Streams) Describe(streamArn string) (StreamInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.getLocked(streamArn)
	if err != nil {
		return StreamInfo{}, err
	}
	return st.info(), nil
}

// Shards lists a stream's shards, parents before children.
func (s *Streams) Shards(streamArn string) ([]ShardInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.getLocked(streamArn)
	if err != nil {
		return nil, err
	}
	out := make([]ShardInfo, len(st.shards))
	for i, sh := range st.shards {
		out[i] = sh.info()
	}
	return out, nil
}

// List returns the streams still readable (enabled, or disabled within the
// retention), of one table or of all tables when tableName is "", newest
// first per table.
func (s *Streams) List(tableName string) []StreamInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trimLocked()
	var out []StreamInfo
	for _, st := range s.streams {
		if tableName == "" || st.table == tableName {
			out = append(out, st.info())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TableName != out[j].TableName {
			return out[i].TableName < out[j].TableName
		}
		return out[i].StreamLabel > out[j].StreamLabel
	})
	return out
}

// TableForStream returns the name of a stream's table.
func (s *Streams) TableForStream(streamArn string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streams[streamArn]
	if !ok {
		return "", false
	}
	return st.table, true
}

func parseAfter(afterSeq string) (uint64, error) {
	if afterSeq == "" {
		return 0, nil
	}
	n, err := parseSeq(afterSeq)
	if err != nil {
		return 0, awsapi.ValidationException("%s", err.Error())
	}
	return n, nil
}

// Records returns up to limit records (1..1000; 0 means 1000) of every
// shard of the stream with a sequence number greater than afterSeq, in
// sequence order; afterSeq "" reads from the trim horizon. It returns an
// *awsapi.Error TrimmedDataAccessException when records after afterSeq
// have been trimmed, and ResourceNotFoundException for an unknown stream.
// The slice is the caller's. With one shard (the default) this is the
// shard's records; ShardRecords reads one shard.
func (s *Streams) Records(streamArn, afterSeq string, limit int) ([]Record, error) {
	return s.readStream(streamArn, afterSeq, func(st *stream, after uint64) ([]Record, error) {
		var all []storedRecord
		for _, sh := range st.shards {
			recs, err := sh.stored(sh.from(after, afterSeq), limit)
			if err != nil {
				return nil, err
			}
			all = append(all, recs...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
		if limit <= 0 || limit > 1000 {
			limit = 1000
		}
		var out []Record
		for _, r := range all[:min(limit, len(all))] {
			out = append(out, r.rec)
		}
		return out, nil
	})
}

// ShardRecords is Records for one shard.
func (s *Streams) ShardRecords(streamArn, shardID, afterSeq string, limit int) ([]Record, error) {
	return s.readStream(streamArn, afterSeq, func(st *stream, after uint64) ([]Record, error) {
		sh, err := st.shard(shardID)
		if err != nil {
			return nil, err
		}
		recs, _, err := sh.read(sh.from(after, afterSeq), limit, 0)
		return recs, err
	})
}

// readStream runs read on the stream with afterSeq parsed, under the lock.
func (s *Streams) readStream(streamArn, afterSeq string, read func(st *stream, after uint64) ([]Record, error)) ([]Record, error) {
	after, err := parseAfter(afterSeq)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.getLocked(streamArn)
	if err != nil {
		return nil, err
	}
	return read(st, after)
}

// from is where a read of sh after afterSeq (parsed: after) starts: after
// its trimmed records when afterSeq is "".
func (sh *shard) from(after uint64, afterSeq string) uint64 {
	if afterSeq == "" {
		return sh.trimmedThrough
	}
	return after
}

// Changed returns a channel closed when records are appended to the stream,
// its shards roll over, or the stream is disabled. Take the channel before
// reading records so no notification is lost:
//
//	ch, _ := streams.Changed(arn)
//	recs, _ := streams.Records(arn, last, 100)
//	if len(recs) == 0 { select { case <-ch: case <-ctx.Done(): } }
func (s *Streams) Changed(streamArn string) (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streams[streamArn]
	if !ok {
		return nil, awsapi.ResourceNotFoundException("Requested resource not found: Stream: %s not found", streamArn)
	}
	return st.changed, nil
}

// TrimmedDataAccessException is returned when reading trimmed records.
func TrimmedDataAccessException() *awsapi.Error {
	return awsapi.NewError("TrimmedDataAccessException",
		"The operation attempted to read past the oldest stream record in a shard.")
}

// stored returns up to limit stored records after seq.
func (sh *shard) stored(after uint64, limit int) ([]storedRecord, error) {
	if after < sh.trimmedThrough {
		return nil, TrimmedDataAccessException()
	}
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	i := sort.Search(len(sh.records), func(i int) bool { return sh.records[i].seq > after })
	return sh.records[i:min(i+limit, len(sh.records))], nil
}

// read returns records after seq, at most limit records and maxBytes bytes
// (0: 1 MB), and the sequence number of the last record returned (or
// after when none). Callers hold s.mu.
func (sh *shard) read(after uint64, limit, maxBytes int) ([]Record, uint64, error) {
	stored, err := sh.stored(after, limit)
	if err != nil {
		return nil, after, err
	}
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	var out []Record
	bytes := 0
	last := after
	for _, r := range stored {
		if len(out) > 0 && bytes+int(r.rec.Dynamodb.SizeBytes) > maxBytes {
			break
		}
		bytes += int(r.rec.Dynamodb.SizeBytes)
		out = append(out, r.rec)
		last = r.seq
	}
	return out, last, nil
}

// lastSeq returns the newest sequence number of the shard (its ending one
// once closed), or the number just before its first possible record.
func (sh *shard) lastSeq() uint64 {
	if sh.endSeq > 0 {
		return sh.endSeq
	}
	if n := len(sh.records); n > 0 {
		return sh.records[n-1].seq
	}
	return max(sh.startSeq-1, sh.trimmedThrough)
}

// exhausted reports whether a reader positioned after seq has read a
// closed shard to its end.
func (sh *shard) exhausted(after uint64) bool {
	if sh.endSeq == 0 {
		return false
	}
	n := len(sh.records)
	return n == 0 || after >= sh.records[n-1].seq
}

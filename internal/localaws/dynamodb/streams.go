package dynamodb

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
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
	ShardID        string
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

type storedRecord struct {
	seq uint64
	at  time.Time
	rec Record
}

type stream struct {
	arn, label, table, tableArn, viewType, shardID string
	created, disabled                              time.Time
	startSeq                                       uint64 // first sequence number the shard may hold
	records                                        []storedRecord
	trimmedThrough                                 uint64 // highest trimmed sequence number
	changed                                        chan struct{}
}

// Streams is the stream store. Its exported methods are the in-process API
// for other packages of the stack (see the package documentation).
type Streams struct {
	env       *awsapi.Env
	retention time.Duration

	mu      sync.Mutex
	seq     uint64
	streams map[string]*stream
}

func newStreams(env *awsapi.Env, retention time.Duration) *Streams {
	return &Streams{env: env, retention: retention, streams: map[string]*stream{},
		seq: uint64(env.Time().Unix()) * 1_000_000}
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

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// create starts a new enabled stream for a table. Its label is the
// creation time with millisecond precision, unique per table.
func (s *Streams) create(table, tableArn, viewType string, prevLabel string) *stream {
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
		shardID:  fmt.Sprintf("shardId-%020d-%s", now.UnixMilli(), randomHex(4)),
		created:  now,
		startSeq: s.seq + 1,
		changed:  make(chan struct{}),
	}
	s.streams[st.arn] = st
	return st
}

// disable closes a stream: it stays readable until retention passes.
func (s *Streams) disable(arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.streams[arn]; ok && st.disabled.IsZero() {
		st.disabled = s.env.Time()
		st.notify()
	}
}

func (st *stream) notify() {
	close(st.changed)
	st.changed = make(chan struct{})
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
			EventID:      randomHex(16),
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
		st.records = append(st.records, storedRecord{seq: s.seq, at: now, rec: r})
		added = true
	}
	if added {
		st.notify()
	}
}

// trim drops records older than the retention and streams disabled longer
// than the retention. Callers hold s.mu.
func (s *Streams) trimLocked() {
	cutoff := s.env.Time().Add(-s.retention)
	for arn, st := range s.streams {
		if !st.disabled.IsZero() && st.disabled.Before(cutoff) {
			delete(s.streams, arn)
			continue
		}
		i := sort.Search(len(st.records), func(i int) bool { return !st.records[i].at.Before(cutoff) })
		if i > 0 {
			st.trimmedThrough = st.records[i-1].seq
			st.records = append([]storedRecord(nil), st.records[i:]...)
		}
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

func (st *stream) info() StreamInfo {
	i := StreamInfo{
		StreamArn: st.arn, StreamLabel: st.label, TableName: st.table, TableArn: st.tableArn,
		StreamViewType: st.viewType, StreamStatus: StreamEnabled, ShardID: st.shardID,
		Created: st.created, Disabled: st.disabled,
	}
	if !st.disabled.IsZero() {
		i.StreamStatus = StreamDisabled
	}
	if n := len(st.records); n > 0 {
		i.TrimHorizon = formatSeq(st.records[0].seq)
		i.Latest = formatSeq(st.records[n-1].seq)
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

// Records returns up to limit records (1..1000; 0 means 1000) with a
// sequence number greater than afterSeq; afterSeq "" reads from the trim
// horizon. It returns an *awsapi.Error TrimmedDataAccessException when
// records after afterSeq have been trimmed, and ResourceNotFoundException
// for an unknown stream. Records are returned in sequence order; the slice
// is the caller's.
func (s *Streams) Records(streamArn, afterSeq string, limit int) ([]Record, error) {
	var after uint64
	if afterSeq != "" {
		n, err := parseSeq(afterSeq)
		if err != nil {
			return nil, awsapi.ValidationException("%s", err.Error())
		}
		after = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.getLocked(streamArn)
	if err != nil {
		return nil, err
	}
	if afterSeq == "" {
		after = st.trimmedThrough
	}
	recs, _, err := st.read(after, limit, 0)
	return recs, err
}

// Changed returns a channel closed when records are appended to the stream
// or the stream is disabled. Take the channel before reading records so no
// notification is lost:
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

// read returns records after seq, at most limit records and maxBytes bytes
// (0: 1 MB), and the sequence number of the last record returned (or
// after when none). Callers hold s.mu.
func (st *stream) read(after uint64, limit, maxBytes int) ([]Record, uint64, error) {
	if after < st.trimmedThrough {
		return nil, after, TrimmedDataAccessException()
	}
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	i := sort.Search(len(st.records), func(i int) bool { return st.records[i].seq > after })
	var out []Record
	bytes := 0
	last := after
	for ; i < len(st.records) && len(out) < limit; i++ {
		r := st.records[i]
		if len(out) > 0 && bytes+int(r.rec.Dynamodb.SizeBytes) > maxBytes {
			break
		}
		bytes += int(r.rec.Dynamodb.SizeBytes)
		out = append(out, r.rec)
		last = r.seq
	}
	return out, last, nil
}

// lastSeqLocked returns the newest sequence number of the stream, or the
// number just before its first possible record.
func (st *stream) lastSeq() uint64 {
	if n := len(st.records); n > 0 {
		return st.records[n-1].seq
	}
	return max(st.startSeq-1, st.trimmedThrough)
}

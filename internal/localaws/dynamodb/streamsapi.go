package dynamodb

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// streamsAPI is the DynamoDB Streams service.
type streamsAPI struct {
	svc *Service
	ops awsapi.Operations
}

func (a *streamsAPI) Spec() awsapi.Spec {
	return apiSpec("dynamodbstreams", "DynamoDBStreams_20120810")
}

// operations is the table of the DynamoDB Streams operations, each decoded
// into its input.
func (a *streamsAPI) operations() awsapi.Operations {
	return awsapi.Operations{
		"ListStreams":      {Handle: awsapi.Decoded(a.listStreams)},
		"DescribeStream":   {Handle: awsapi.Decoded(a.describeStream)},
		"GetShardIterator": {Handle: awsapi.Decoded(a.getShardIterator)},
		"GetRecords":       {Handle: awsapi.Decoded(a.getRecords)},
	}
}

func (a *streamsAPI) Handle(req *awsapi.Request) (any, error) { return a.ops.Handle(req) }

type listStreamsInput struct {
	TableName               string
	Limit                   int
	ExclusiveStartStreamArn string
}

func (a *streamsAPI) listStreams(req *awsapi.Request, in *listStreamsInput) (any, error) {
	// ListStreams has no resource type: AWS authorises it on "*" only,
	// whether or not TableName is given.
	if err := req.Authorize("dynamodb:ListStreams", "*"); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit)
	if err != nil {
		return nil, err
	}
	all := a.svc.streams.List(in.TableName)
	sort.Slice(all, func(i, j int) bool { return all[i].StreamArn < all[j].StreamArn })
	streams := []map[string]string{}
	out := map[string]any{}
	for _, st := range all {
		if in.ExclusiveStartStreamArn != "" && st.StreamArn <= in.ExclusiveStartStreamArn {
			continue
		}
		if len(streams) == limit {
			out["LastEvaluatedStreamArn"] = streams[len(streams)-1]["StreamArn"]
			break
		}
		streams = append(streams, map[string]string{"StreamArn": st.StreamArn, "TableName": st.TableName, "StreamLabel": st.StreamLabel})
	}
	out["Streams"] = streams
	return out, nil
}

// pageLimit is the Limit of a ListTables, ListStreams or DescribeStream
// page: 100 when absent, else between 1 and 100.
func pageLimit(limit int) (int, error) {
	if limit == 0 {
		return 100, nil
	}
	if limit < 1 || limit > 100 {
		return 0, awsapi.ValidationException("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100", limit)
	}
	return limit, nil
}

type describeStreamInput struct {
	StreamArn             string
	Limit                 int
	ExclusiveStartShardId string
}

func (a *streamsAPI) describeStream(req *awsapi.Request, in *describeStreamInput) (any, error) {
	if err := req.Authorize("dynamodb:DescribeStream", in.StreamArn); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit)
	if err != nil {
		return nil, err
	}
	s := a.svc.streams
	info, err := s.Describe(in.StreamArn)
	if err != nil {
		return nil, err
	}
	all, err := s.Shards(in.StreamArn)
	if err != nil {
		return nil, err
	}

	var keySchema []keyElement
	a.svc.mu.Lock()
	if t, ok := a.svc.tables[info.TableName]; ok {
		keySchema = t.keySchema
	}
	a.svc.mu.Unlock()

	shards, last := shardPage(all, in.ExclusiveStartShardId, limit)
	d := map[string]any{
		"StreamArn":               info.StreamArn,
		"StreamLabel":             info.StreamLabel,
		"StreamStatus":            info.StreamStatus,
		"StreamViewType":          info.StreamViewType,
		"CreationRequestDateTime": awsapi.Epoch(info.Created),
		"TableName":               info.TableName,
		"Shards":                  shards,
	}
	if keySchema != nil {
		d["KeySchema"] = keySchema
	}
	if last != "" {
		d["LastEvaluatedShardId"] = last
	}
	return map[string]any{"StreamDescription": d}, nil
}

// shardPage renders the shards after exclusiveStart, at most limit, and
// the LastEvaluatedShardId when more follow.
func shardPage(all []ShardInfo, exclusiveStart string, limit int) (page []map[string]any, last string) {
	page = []map[string]any{}
	started := exclusiveStart == ""
	for _, sh := range all {
		if !started {
			started = sh.ShardID == exclusiveStart
			continue
		}
		if len(page) == limit {
			return page, last
		}
		last = sh.ShardID
		rng := map[string]string{"StartingSequenceNumber": sh.StartingSequenceNumber}
		if sh.Closed {
			rng["EndingSequenceNumber"] = sh.EndingSequenceNumber
		}
		m := map[string]any{"ShardId": sh.ShardID, "SequenceNumberRange": rng}
		if sh.ParentShardID != "" {
			m["ParentShardId"] = sh.ParentShardID
		}
		page = append(page, m)
	}
	return page, ""
}

// iterator is the decoded content of a shard iterator.
type iterator struct {
	Stream string `json:"a"`
	Shard  string `json:"s"`
	After  uint64 `json:"p"`
	Issued int64  `json:"t"`
}

func (it iterator) encode() string {
	b, _ := json.Marshal(it)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeIterator(s string) (iterator, error) {
	var it iterator
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &it) != nil || it.Stream == "" {
		return it, awsapi.ValidationException("Invalid ShardIterator")
	}
	return it, nil
}

type getShardIteratorInput struct {
	StreamArn         string
	ShardId           string
	ShardIteratorType string
	SequenceNumber    string
}

func (a *streamsAPI) getShardIterator(req *awsapi.Request, in *getShardIteratorInput) (any, error) {
	if err := req.Authorize("dynamodb:GetShardIterator", in.StreamArn); err != nil {
		return nil, err
	}
	s := a.svc.streams
	s.mu.Lock()
	defer s.mu.Unlock()
	st, sh, err := s.shardLocked(in.StreamArn, in.ShardId)
	if err != nil {
		return nil, err
	}
	it := iterator{Stream: st.arn, Shard: sh.id, Issued: s.env.Time().UnixNano()}
	switch in.ShardIteratorType {
	case "TRIM_HORIZON":
		it.After = max(sh.trimmedThrough, sh.startSeq-1)
	case "LATEST":
		it.After = sh.lastSeq()
	case "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER":
		if in.SequenceNumber == "" {
			return nil, awsapi.ValidationException("SequenceNumber is required for ShardIteratorType %s", in.ShardIteratorType)
		}
		n, err := parseSeq(in.SequenceNumber)
		if err != nil || n == 0 {
			return nil, awsapi.ValidationException("Invalid SequenceNumber: %s", in.SequenceNumber)
		}
		it.After = n
		if in.ShardIteratorType == "AT_SEQUENCE_NUMBER" {
			it.After = n - 1
		}
		if it.After < sh.trimmedThrough {
			return nil, TrimmedDataAccessException()
		}
	default:
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]", in.ShardIteratorType)
	}
	return map[string]string{"ShardIterator": it.encode()}, nil
}

type getRecordsInput struct {
	ShardIterator string
	Limit         int
}

func (a *streamsAPI) getRecords(req *awsapi.Request, in *getRecordsInput) (any, error) {
	if in.Limit < 0 || in.Limit > 1000 {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 1000", in.Limit)
	}
	it, err := decodeIterator(in.ShardIterator)
	if err != nil {
		return nil, err
	}
	if err := req.Authorize("dynamodb:GetRecords", it.Stream); err != nil {
		return nil, err
	}
	s := a.svc.streams
	now := s.env.Time()
	if now.Sub(time.Unix(0, it.Issued)) > a.svc.opts.IteratorLifetime {
		return nil, awsapi.NewError("ExpiredIteratorException", "Iterator expired. The iterator was created at time %s while right now it is %s. The iterator is valid for %s.",
			time.Unix(0, it.Issued).UTC().Format(time.RFC1123), now.UTC().Format(time.RFC1123), a.svc.opts.IteratorLifetime)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, sh, err := s.shardLocked(it.Stream, it.Shard)
	if err != nil {
		return nil, err
	}
	recs, last, err := sh.read(it.After, in.Limit, 0)
	if err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []Record{}
	}
	out := map[string]any{"Records": recs}
	if !sh.exhausted(last) {
		next := iterator{Stream: it.Stream, Shard: it.Shard, After: last, Issued: now.UnixNano()}
		out["NextShardIterator"] = next.encode()
	}
	return out, nil
}

package localaws

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/eventpattern"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
)

func init() {
	registerService("esm", func(s *Stack) ([]awsapi.Service, error) {
		svc := esm.New(esm.Config{
			Env: s.Env(),
			Streams: func() (esm.Streams, error) {
				d := s.DynamoDB()
				if d == nil {
					return nil, errors.New("event source mappings: the dynamodb service is not running")
				}
				return MappingStreams(d.Streams()), nil
			},
			Functions: dependency[esm.Functions](s, "lambda"),
			Queues:    dependency[esm.Queues](s, "sqs"),
			Messages:  dependency[esm.QueueMessages](s, "sqs"),
			Metrics:   optionalDependency[esm.MetricSink](s, "cloudwatch"),
			Compile: func(pattern string) (esm.Matcher, error) {
				return eventpattern.Compile(pattern)
			},
		})
		// The lambda service owns the REST paths and delegates the event
		// source mapping operations here.
		if l, ok := s.Service("lambda"); ok {
			h, ok := l.(interface {
				SetEventSourceMappings(h lambda.EventSourceMappings)
			})
			if !ok {
				return nil, fmt.Errorf("event source mappings: the lambda service (%T) has no SetEventSourceMappings", l)
			}
			h.SetEventSourceMappings(svc)
		}
		return []awsapi.Service{svc}, nil
	}, "dynamodb", "lambda", "sqs", "iam")
}

// EventSourceMappings returns the stack's event source mapping service, or
// nil when disabled.
func (s *Stack) EventSourceMappings() *esm.Service {
	e, _ := lookupService[*esm.Service](s, "lambda-esm")
	return e
}

// MappingStreams adapts the DynamoDB in-process stream API to the streams
// event source mappings read (every shard, parents before children).
func MappingStreams(s *dynamodb.Streams) esm.Streams { return ddbStreams{s} }

type ddbStreams struct{ s *dynamodb.Streams }

func (d ddbStreams) StreamExists(streamArn string) bool {
	_, err := d.s.Describe(streamArn)
	return err == nil
}

func (d ddbStreams) Shards(streamArn string) ([]esm.Shard, error) {
	shards, err := d.s.Shards(streamArn)
	if err != nil {
		return nil, err
	}
	out := make([]esm.Shard, len(shards))
	for i, sh := range shards {
		out[i] = esm.Shard{ID: sh.ShardID, ParentID: sh.ParentShardID, Closed: sh.Closed}
	}
	return out, nil
}

func (d ddbStreams) LatestSequenceNumber(streamArn, shardID string) (string, error) {
	shards, err := d.s.Shards(streamArn)
	if err != nil {
		return "", err
	}
	for _, sh := range shards {
		if sh.ShardID == shardID {
			return sh.Latest, nil
		}
	}
	return "", nil
}

func (d ddbStreams) Records(streamArn, shardID string, after string, limit int) ([]esm.StreamRecord, bool, error) {
	info, err := d.s.Describe(streamArn)
	if err != nil {
		return nil, false, err
	}
	recs, err := d.s.ShardRecords(streamArn, shardID, after, limit)
	trimmed := false
	var ae *awsapi.Error
	if errors.As(err, &ae) && ae.Code == "TrimmedDataAccessException" {
		trimmed = true
		recs, err = d.s.ShardRecords(streamArn, shardID, "", limit)
	}
	if err != nil {
		return nil, false, err
	}
	out := make([]esm.StreamRecord, len(recs))
	for i, r := range recs {
		sr := esm.StreamRecord{
			EventID:                     r.EventID,
			EventName:                   strings.ToUpper(r.EventName),
			EventVersion:                r.EventVersion,
			SequenceNumber:              r.Dynamodb.SequenceNumber,
			ApproximateCreationDateTime: unixSeconds(r.Dynamodb.ApproximateCreationDateTime),
			SizeBytes:                   r.Dynamodb.SizeBytes,
			StreamViewType:              r.Dynamodb.StreamViewType,
		}
		sr.Keys, _ = marshalItem(r.Dynamodb.Keys)
		if pk, ok := r.Dynamodb.Keys[info.HashKey]; ok {
			b, _ := json.Marshal(pk)
			sr.PartitionKey = string(b)
		}
		sr.NewImage, _ = marshalItem(r.Dynamodb.NewImage)
		sr.OldImage, _ = marshalItem(r.Dynamodb.OldImage)
		if r.UserIdentity != nil {
			// Lambda spells it {"type","principalId"}, unlike GetRecords'
			// {"Type","PrincipalId"}; filters match on Lambda's shape.
			sr.UserIdentity, _ = json.Marshal(r.ForLambda(streamArn).UserIdentity)
		}
		out[i] = sr
	}
	return out, trimmed, nil
}

func marshalItem(it dynamodb.Item) (json.RawMessage, error) {
	if it == nil {
		return nil, nil
	}
	return json.Marshal(it)
}

func unixSeconds(s int64) time.Time { return time.Unix(s, 0) }

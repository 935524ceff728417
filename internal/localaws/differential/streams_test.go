package differential_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// TestDifferentialDynamoDBStreams: the stream's description, its shard, the
// iterator types and the records of an insert, a modify and a remove, in
// the format Lambda and other consumers parse.
func TestDifferentialDynamoDBStreams(t *testing.T) {
	compareOnTable(t, "dynamodbstreams/records", tableSpec{name: "diff-streams", pk: "PK:S", sk: "SK:S", stream: ddbtypes.StreamViewTypeNewAndOldImages}, func(r *run, table string) {
		key := vals("PK", s("order#1"), "SK", s("OUTBOX#1"))
		r.put(table, vals("PK", s("order#1"), "SK", s("OUTBOX#1"), "status", s("PENDING")))
		_, err := r.ddb().UpdateItem(r.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
			UpdateExpression: aws.String("SET #s = :p"), ExpressionAttributeNames: map[string]string{"#s": "status"}, ExpressionAttributeValues: vals(":p", s("PUBLISHED"))})
		r.rec("UpdateItem", nil, err)
		_, err = r.ddb().DeleteItem(r.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key})
		r.rec("DeleteItem", nil, err)
		// An update that changes nothing writes no record.
		r.put(table, vals("PK", s("order#2"), "SK", s("STATE"), "v", ni(1)))
		r.put(table, vals("PK", s("order#2"), "SK", s("STATE"), "v", ni(1)))

		st := dynamodbstreams.NewFromConfig(r.cfg)
		desc, err := r.ddb().DescribeTable(r.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			r.rec("DescribeTable", nil, err)
			return
		}
		r.note("DescribeTable stream", map[string]any{"LatestStreamArn": desc.Table.LatestStreamArn, "LatestStreamLabel": desc.Table.LatestStreamLabel, "StreamSpecification": desc.Table.StreamSpecification})
		list, err := st.ListStreams(r.ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)})
		r.rec("ListStreams", list, err)
		arn := desc.Table.LatestStreamArn
		sd, err := st.DescribeStream(r.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
		r.rec("DescribeStream", sd, err)
		if err != nil || len(sd.StreamDescription.Shards) == 0 {
			return
		}
		shard := sd.StreamDescription.Shards[0].ShardId
		records := r.readShard("TRIM_HORIZON", st, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: shard, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if len(records) >= 2 {
			r.readShard("AT_SEQUENCE_NUMBER of the second", st, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: shard,
				ShardIteratorType: streamtypes.ShardIteratorTypeAtSequenceNumber, SequenceNumber: records[1].Dynamodb.SequenceNumber})
			r.readShard("AFTER_SEQUENCE_NUMBER of the second", st, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: shard,
				ShardIteratorType: streamtypes.ShardIteratorTypeAfterSequenceNumber, SequenceNumber: records[1].Dynamodb.SequenceNumber})
		}
		r.readShard("LATEST", st, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: shard, ShardIteratorType: streamtypes.ShardIteratorTypeLatest})
		bad, err := st.GetRecords(r.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String("not-an-iterator")})
		r.rec("GetRecords with a bad iterator", bad, err)
		missing, err := st.GetShardIterator(r.ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: aws.String("shardId-00000000000000000000-00000000"), ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		r.rec("GetShardIterator missing shard", missing, err)
	})
}

// readShard takes an iterator and reads the shard once, recording the
// records (the iterators themselves are opaque).
func (r *run) readShard(name string, st *dynamodbstreams.Client, in *dynamodbstreams.GetShardIteratorInput) []streamtypes.Record {
	it, err := st.GetShardIterator(r.ctx, in)
	if err != nil {
		r.rec("GetShardIterator "+name, nil, err)
		return nil
	}
	out, err := st.GetRecords(r.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		r.rec("GetRecords "+name, nil, err)
		return nil
	}
	r.note("GetRecords "+name, map[string]any{"Records": out.Records, "HasNextShardIterator": out.NextShardIterator != nil})
	return out.Records
}

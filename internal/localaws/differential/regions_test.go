package differential_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// inRegion is the run's configuration signed for another Region.
func (r *run) inRegion(region string) aws.Config {
	cfg := r.cfg.Copy()
	cfg.Region = region
	return cfg
}

// TestDifferentialRegions checks that each Region keeps its own resources:
// a table of us-east-1 is not found from eu-west-1, which may create its
// own of the same name, and a queue's ARN names its Region.
func TestDifferentialRegions(t *testing.T) {
	compare(t, "regions/isolation", func(r *run) {
		home, away := dynamodb.NewFromConfig(r.cfg), dynamodb.NewFromConfig(r.inRegion("eu-west-1"))
		in := tableSpec{name: "diff-regions", pk: "pk:S"}.input()
		in.BillingMode = ddbtypes.BillingModePayPerRequest
		in.ProvisionedThroughput = nil
		out, err := home.CreateTable(r.ctx, in)
		r.rec("CreateTable us-east-1", tableArn(out), err)
		_, err = away.DescribeTable(r.ctx, &dynamodb.DescribeTableInput{TableName: aws.String("diff-regions")})
		r.rec("DescribeTable eu-west-1 before", nil, err)
		out, err = away.CreateTable(r.ctx, in)
		r.rec("CreateTable eu-west-1", tableArn(out), err)
		lt, err := away.ListTables(r.ctx, &dynamodb.ListTablesInput{ExclusiveStartTableName: aws.String("diff-regions-")})
		r.rec("ListTables eu-west-1 after the name", lt, err)
		queues := sqs.NewFromConfig(r.inRegion("eu-west-1"))
		q, err := queues.CreateQueue(r.ctx, &sqs.CreateQueueInput{QueueName: aws.String("diff-regions-q")})
		if err != nil {
			r.rec("CreateQueue eu-west-1", q, err)
			return
		}
		attrs, err := queues.GetQueueAttributes(r.ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		r.rec("GetQueueAttributes eu-west-1", attrs, err)
		url, err := sqs.NewFromConfig(r.cfg).GetQueueUrl(r.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("diff-regions-q")})
		r.rec("GetQueueUrl us-east-1", url, err)
		for _, c := range []*dynamodb.Client{home, away} {
			_, _ = c.DeleteTable(r.ctx, &dynamodb.DeleteTableInput{TableName: aws.String("diff-regions")})
		}
	})
}

// TestDifferentialGlobalTables adds a replica to a table with UpdateTable's
// ReplicaUpdates (version 2019.11.21), describes the table in both
// Regions, writes in each, reads in the other, and removes the replica.
func TestDifferentialGlobalTables(t *testing.T) {
	compare(t, "dynamodb/global-tables", func(r *run) {
		home, away := dynamodb.NewFromConfig(r.cfg), dynamodb.NewFromConfig(r.inRegion("eu-west-2"))
		in := tableSpec{name: "diff-global", pk: "pk:S", stream: ddbtypes.StreamViewTypeNewAndOldImages}.input()
		in.BillingMode = ddbtypes.BillingModePayPerRequest
		in.ProvisionedThroughput = nil
		out, err := home.CreateTable(r.ctx, in)
		r.rec("CreateTable", tableArn(out), err)
		_, err = home.PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String("diff-global"), Item: vals("pk", s("before"))})
		r.rec("PutItem before", nil, err)
		create := []ddbtypes.ReplicationGroupUpdate{{Create: &ddbtypes.CreateReplicationGroupMemberAction{RegionName: aws.String("eu-west-2")}}}
		up, err := home.UpdateTable(r.ctx, &dynamodb.UpdateTableInput{TableName: aws.String("diff-global"), ReplicaUpdates: create})
		r.rec("UpdateTable create replica", globalView(up), err)
		d, err := waitReplicas(r, home, "diff-global")
		r.rec("DescribeTable us-east-1 when ACTIVE", globalView(d), err)
		d, err = away.DescribeTable(r.ctx, &dynamodb.DescribeTableInput{TableName: aws.String("diff-global")})
		r.rec("DescribeTable eu-west-2", globalView(d), err)
		got, err := readUntil(r, away, "diff-global", "before")
		r.rec("GetItem eu-west-2 written before", got, err)
		_, err = away.PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String("diff-global"), Item: vals("pk", s("away"))})
		r.rec("PutItem eu-west-2", nil, err)
		got, err = readUntil(r, home, "diff-global", "away")
		r.rec("GetItem us-east-1 written in eu-west-2", got, err)
		up, err = home.UpdateTable(r.ctx, &dynamodb.UpdateTableInput{TableName: aws.String("diff-global"), ReplicaUpdates: create})
		r.rec("UpdateTable create replica again", globalView(up), err)
		up, err = home.UpdateTable(r.ctx, &dynamodb.UpdateTableInput{TableName: aws.String("diff-global"),
			StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(false)}})
		r.rec("UpdateTable disable the stream", globalView(up), err)
		up, err = home.UpdateTable(r.ctx, &dynamodb.UpdateTableInput{TableName: aws.String("diff-global"),
			ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{{Delete: &ddbtypes.DeleteReplicationGroupMemberAction{RegionName: aws.String("eu-west-2")}}}})
		r.rec("UpdateTable delete replica", globalView(up), err)
		_, _ = home.DeleteTable(r.ctx, &dynamodb.DeleteTableInput{TableName: aws.String("diff-global")})
		_, _ = away.DeleteTable(r.ctx, &dynamodb.DeleteTableInput{TableName: aws.String("diff-global")})
	})
}

// TestDifferentialStrongConsistency: a global table created with
// MultiRegionConsistency STRONG (a replica and a witness), its description,
// and the transactions and TTL that MRSC tables refuse.
func TestDifferentialStrongConsistency(t *testing.T) {
	compare(t, "dynamodb/mrsc", func(r *run) {
		home := dynamodb.NewFromConfig(r.cfg)
		in := tableSpec{name: "diff-mrsc", pk: "pk:S", stream: ddbtypes.StreamViewTypeNewAndOldImages}.input()
		in.BillingMode = ddbtypes.BillingModePayPerRequest
		in.ProvisionedThroughput = nil
		out, err := home.CreateTable(r.ctx, in)
		r.rec("CreateTable", tableArn(out), err)
		up, err := home.UpdateTable(r.ctx, localawstest.StrongGlobalTableInput("diff-mrsc", "us-east-2", "us-west-2"))
		r.rec("UpdateTable STRONG", consistencyView(up), err)
		d, err := waitReplicas(r, home, "diff-mrsc")
		r.rec("DescribeTable when ACTIVE", consistencyView(d), err)
		_, err = home.TransactWriteItems(r.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{TableName: aws.String("diff-mrsc"), Item: vals("pk", s("tx"))}}}})
		r.rec("TransactWriteItems", nil, err)
		_, err = home.UpdateTimeToLive(r.ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("diff-mrsc"),
			TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)}})
		r.rec("UpdateTimeToLive", nil, err)
		_, err = home.PutItem(r.ctx, &dynamodb.PutItemInput{TableName: aws.String("diff-mrsc"), Item: vals("pk", s("single"))})
		r.rec("PutItem", nil, err)
		_, _ = home.DeleteTable(r.ctx, &dynamodb.DeleteTableInput{TableName: aws.String("diff-mrsc")})
		_, _ = dynamodb.NewFromConfig(r.inRegion("us-east-2")).DeleteTable(r.ctx, &dynamodb.DeleteTableInput{TableName: aws.String("diff-mrsc")})
	})
}

// consistencyView is what a table description says of a global table's
// consistency mode: the mode, its replicas and its witnesses.
func consistencyView(out any) any {
	v, ok := globalView(out).(map[string]any)
	if !ok {
		return nil
	}
	d := describedTable(out)
	return map[string]any{"MultiRegionConsistency": string(d.MultiRegionConsistency), "GlobalTableWitnesses": d.GlobalTableWitnesses, "Replicas": v["Replicas"]}
}

// tableArn is the ARN of a created table, which names its Region.
func tableArn(out *dynamodb.CreateTableOutput) any {
	if out == nil || out.TableDescription == nil {
		return nil
	}
	return map[string]any{"TableArn": aws.ToString(out.TableDescription.TableArn)}
}

// globalView is what a table description says of a global table: its
// Region (in its ARN), replicas, version and stream; the rest is compared
// by the dynamodb/tables scenario.
func globalView(out any) any {
	d := describedTable(out)
	if d == nil {
		return nil
	}
	return map[string]any{"TableArn": aws.ToString(d.TableArn), "Replicas": d.Replicas,
		"GlobalTableVersion": aws.ToString(d.GlobalTableVersion), "StreamSpecification": d.StreamSpecification}
}

// describedTable is the table description of an UpdateTable or
// DescribeTable output, or nil.
func describedTable(out any) *ddbtypes.TableDescription {
	switch o := out.(type) {
	case *dynamodb.UpdateTableOutput:
		if o != nil {
			return o.TableDescription
		}
	case *dynamodb.DescribeTableOutput:
		if o != nil {
			return o.Table
		}
	}
	return nil
}

// waitReplicas describes a table until every replica is ACTIVE, for at
// most five seconds, and returns the last description.
func waitReplicas(r *run, c *dynamodb.Client, name string) (*dynamodb.DescribeTableOutput, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := c.DescribeTable(r.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		active := err == nil
		if err == nil {
			for _, rep := range d.Table.Replicas {
				active = active && rep.ReplicaStatus == ddbtypes.ReplicaStatusActive
			}
		}
		if active || time.Now().After(deadline) {
			return d, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readUntil reads an item until it is there, for at most five seconds, and
// returns the last read.
func readUntil(r *run, c *dynamodb.Client, table, pk string) (*dynamodb.GetItemOutput, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := c.GetItem(r.ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: vals("pk", s(pk)), ConsistentRead: aws.Bool(true)})
		if (err == nil && out.Item != nil) || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

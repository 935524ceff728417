package localaws_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

const replicaWait = 30 * time.Second

// globalTable creates an on-demand table in the default Region and adds
// a replica in otherRegion, and waits for it to be ACTIVE.
func globalTable(ctx context.Context, t *testing.T, home, away *dynamodb.Client, name string) {
	t.Helper()
	in := localawstest.TableInput(name, "pk", "", "")
	if _, err := home.CreateTable(ctx, in); err != nil {
		t.Fatal(err)
	}
	out, err := home.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name),
		ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{{Create: &ddbtypes.CreateReplicationGroupMemberAction{RegionName: aws.String(otherRegion)}}}})
	if err != nil {
		t.Fatal(err)
	}
	d := out.TableDescription
	if len(d.Replicas) != 1 || aws.ToString(d.Replicas[0].RegionName) != otherRegion || d.Replicas[0].ReplicaStatus != ddbtypes.ReplicaStatusCreating {
		t.Fatalf("UpdateTable's replicas: %+v", d.Replicas)
	}
	if d.StreamSpecification == nil || d.StreamSpecification.StreamViewType != ddbtypes.StreamViewTypeNewAndOldImages {
		t.Fatalf("adding a replica did not enable a NEW_AND_OLD_IMAGES stream: %+v", d.StreamSpecification)
	}
	localawstest.EventuallyState(t, replicaWait, "the replica ACTIVE", func() (bool, string) {
		out, err := home.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Table.Replicas) == 1 && out.Table.Replicas[0].ReplicaStatus == ddbtypes.ReplicaStatusActive &&
			aws.ToString(out.Table.GlobalTableVersion) == "2019.11.21", fmt.Sprintf("%+v", out.Table.Replicas)
	})
}

func item(pk, v string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "v": &ddbtypes.AttributeValueMemberS{Value: v}}
}

// waitItem waits until c's replica holds pk with value v ("" for absent).
func waitItem(ctx context.Context, t *testing.T, c *dynamodb.Client, table, pk, v string) {
	t.Helper()
	localawstest.EventuallyState(t, replicaWait, fmt.Sprintf("%s=%q replicated", pk, v), func() (bool, string) {
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if s, ok := out.Item["v"].(*ddbtypes.AttributeValueMemberS); ok {
			got = s.Value
		}
		return got == v, fmt.Sprintf("%q", got)
	})
}

// TestGlobalTableReplicates adds a replica to a table and checks what AWS
// documents of version 2019.11.21: the replica is served in its Region,
// holds the items written before, and writes in either Region reach the
// other, each on both replicas' streams.
func TestGlobalTableReplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t, func(o *localaws.Options) { o.ReplicationLag = 20 * time.Millisecond })
	home, away := dynamodb.NewFromConfig(localawstest.Config(s)), dynamodb.NewFromConfig(localawstest.RegionConfig(s, otherRegion))
	if _, err := home.CreateTable(ctx, localawstest.TableInput("before", "pk", "", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := home.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("before"), Item: item("old", "1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := home.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("before"),
		ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{{Create: &ddbtypes.CreateReplicationGroupMemberAction{RegionName: aws.String(otherRegion)}}}}); err != nil {
		t.Fatal(err)
	}
	waitItem(ctx, t, eventuallyTable(ctx, t, away, "before"), "before", "old", "1")

	globalTable(ctx, t, home, away, "global")
	d, err := away.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("global")})
	if err != nil {
		t.Fatal(err)
	}
	if arn := aws.ToString(d.Table.TableArn); arn != "arn:aws:dynamodb:eu-west-1:000000000000:table/global" {
		t.Errorf("replica ARN %s", arn)
	}
	if r := d.Table.Replicas; len(r) != 1 || aws.ToString(r[0].RegionName) != "us-east-1" {
		t.Errorf("the replica's replicas: %+v", r)
	}
	if _, err := home.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("global"), Item: item("a", "home")}); err != nil {
		t.Fatal(err)
	}
	waitItem(ctx, t, away, "global", "a", "home")
	localawstest.EventuallyState(t, replicaWait, "us-east-1's ReplicationLatency to eu-west-1", func() (bool, string) {
		metrics, err := cloudwatch.NewFromConfig(localawstest.Config(s)).ListMetrics(ctx, &cloudwatch.ListMetricsInput{
			Namespace: aws.String("AWS/DynamoDB"), MetricName: aws.String("ReplicationLatency"),
			Dimensions: []cwtypes.DimensionFilter{{Name: aws.String("TableName"), Value: aws.String("global")},
				{Name: aws.String("ReceivingRegion"), Value: aws.String(otherRegion)}}})
		if err != nil {
			t.Fatal(err)
		}
		return len(metrics.Metrics) == 1, fmt.Sprint(len(metrics.Metrics), " metrics")
	})
	if _, err := away.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("global"), Item: item("b", "away")}); err != nil {
		t.Fatal(err)
	}
	waitItem(ctx, t, home, "global", "b", "away")
	if _, err := away.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("global"),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "a"}}}); err != nil {
		t.Fatal(err)
	}
	waitItem(ctx, t, home, "global", "a", "")
	for region, c := range map[string]*dynamodb.Client{"us-east-1": home, otherRegion: away} {
		want := []streamtypes.OperationType{"INSERT", "INSERT", "REMOVE"}
		if got := streamEvents(ctx, t, s, region, c, "global"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s stream: %v, want %v (local and replicated writes)", region, got, want)
		}
	}
	_, err = home.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("global"), StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(false)}})
	localawstest.WantCode(t, err, "ValidationException", "disabling the stream of a global table")

	if _, err := home.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("global"),
		ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{{Delete: &ddbtypes.DeleteReplicationGroupMemberAction{RegionName: aws.String(otherRegion)}}}}); err != nil {
		t.Fatal(err)
	}
	// The replica is DELETING, then gone from the home table's replicas
	// only once its Region no longer serves it.
	localawstest.Eventually(t, replicaWait, "the replica gone from the home table's replicas", func() bool {
		d, err := home.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("global")})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Table.Replicas {
			if r.ReplicaStatus != ddbtypes.ReplicaStatusDeleting {
				t.Fatalf("the replica being deleted is %s, want DELETING", r.ReplicaStatus)
			}
		}
		return len(d.Table.Replicas) == 0
	})
	if _, err := away.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("global")}); err == nil {
		t.Errorf("the replica is gone from the home table's replicas, but %s still serves it", otherRegion)
	}
}

// eventuallyTable waits for a replica table to be served by c.
func eventuallyTable(ctx context.Context, t *testing.T, c *dynamodb.Client, name string) *dynamodb.Client {
	t.Helper()
	localawstest.Eventually(t, replicaWait, "the replica table "+name, func() bool {
		_, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		return err == nil
	})
	return c
}

// streamEvents reads the event names of a table's stream in a Region.
func streamEvents(ctx context.Context, t *testing.T, s *localaws.Stack, region string, c *dynamodb.Client, table string) []streamtypes.OperationType {
	t.Helper()
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	sc := dynamodbstreams.NewFromConfig(localawstest.RegionConfig(s, region))
	ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: d.Table.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	var names []streamtypes.OperationType
	for _, sh := range ds.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: d.Table.LatestStreamArn,
			ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs.Records {
			names = append(names, r.EventName)
		}
	}
	return names
}

// TestGlobalTableRefusals checks what UpdateTable refuses of a replica: a
// provisioned table (AWS wants on-demand or auto scaling) and a stream of
// another view type than NEW_AND_OLD_IMAGES.
func TestGlobalTableRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	home := dynamodb.NewFromConfig(localawstest.Config(s))
	prov := localawstest.TableInput("prov", "pk", "", "")
	prov.BillingMode = ddbtypes.BillingModeProvisioned
	prov.ProvisionedThroughput = &ddbtypes.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)}
	if _, err := home.CreateTable(ctx, prov); err != nil {
		t.Fatal(err)
	}
	if _, err := home.CreateTable(ctx, localawstest.TableInput("keys", "pk", "", ddbtypes.StreamViewTypeKeysOnly)); err != nil {
		t.Fatal(err)
	}
	create := []ddbtypes.ReplicationGroupUpdate{{Create: &ddbtypes.CreateReplicationGroupMemberAction{RegionName: aws.String(otherRegion)}}}
	for _, c := range []struct{ table, fragment string }{
		{"prov", "Pay-Per-Request or AutoScaled"},
		{"keys", "NEW_AND_OLD_IMAGES"},
	} {
		_, err := home.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(c.table), ReplicaUpdates: create})
		localawstest.WantCode(t, err, "ValidationException", "a replica of "+c.table)
		if !strings.Contains(err.Error(), c.fragment) {
			t.Errorf("a replica of %s: %v, want a message containing %q", c.table, err, c.fragment)
		}
	}
	_, err := home.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("keys"),
		ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{{Create: &ddbtypes.CreateReplicationGroupMemberAction{RegionName: aws.String("us-east-1")}}}})
	localawstest.WantCode(t, err, "ValidationException", "a replica in the table's own Region")
}

// TestGlobalTableLastWriterWins writes one item in both Regions within the
// replication lag: each conditional write is checked against its own
// replica only, so both succeed, and both replicas converge on the later
// write.
func TestGlobalTableLastWriterWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	home, away := dynamodb.NewFromConfig(localawstest.Config(s)), dynamodb.NewFromConfig(localawstest.RegionConfig(s, otherRegion))
	globalTable(ctx, t, home, away, "lww")
	ctl := localawstest.Control(s)
	if _, err := ctl.SetReplicationLag(ctx, "1s"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		c *dynamodb.Client
		v string
	}{{home, "first"}, {away, "second"}} {
		if _, err := w.c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("lww"), Item: item("k", w.v),
			ConditionExpression: aws.String("attribute_not_exists(pk)")}); err != nil {
			t.Fatalf("conditional put of %s: %v (checked against the local replica only, it succeeds)", w.v, err)
		}
	}
	waitItem(ctx, t, home, "lww", "k", "second")
	waitItem(ctx, t, away, "lww", "k", "second")
	localawstest.EventuallyState(t, replicaWait, "nothing left to replicate", func() (bool, string) {
		r, err := ctl.Replication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(r.Pending) == 0, fmt.Sprint(r.Pending)
	})
	waitItem(ctx, t, home, "lww", "k", "second")
	if _, err := away.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("lww")}); err != nil {
		t.Fatal(err)
	}
	localawstest.EventuallyState(t, replicaWait, "the deleted replica gone from us-east-1's Replicas", func() (bool, string) {
		d, err := home.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("lww")})
		if err != nil {
			t.Fatal(err)
		}
		return len(d.Table.Replicas) == 0 && d.Table.GlobalTableVersion == nil, fmt.Sprintf("%+v", d.Table.Replicas)
	})
}

// TestRegionDownAndBack takes a Region down: its endpoint drops
// connections, replication to and from it waits, and once it is back the
// writes made meanwhile flow both ways.
func TestRegionDownAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t, func(o *localaws.Options) { o.ReplicationLag = 20 * time.Millisecond })
	home := dynamodb.NewFromConfig(localawstest.Config(s))
	away := dynamodb.NewFromConfig(localawstest.RegionConfig(s, otherRegion), func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	globalTable(ctx, t, home, away, "partitioned")
	ctl := localawstest.Control(s)
	// A lag longer than the test waits keeps eu-west-1's write queued
	// until the Region is down.
	if _, err := ctl.SetReplicationLag(ctx, "1h"); err != nil {
		t.Fatal(err)
	}
	if _, err := away.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("partitioned"), Item: item("from-away", "1")}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.RegionDown(ctx, otherRegion); err != nil {
		t.Fatal(err)
	}
	if _, err := away.ListTables(ctx, &dynamodb.ListTablesInput{}); err == nil || localawstest.ErrorCode(err) != "" {
		t.Fatalf("a request to a Region that is down: %v, want a connection error", err)
	}
	if _, err := home.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("partitioned"), Item: item("from-home", "1")}); err != nil {
		t.Fatal(err)
	}
	localawstest.EventuallyState(t, replicaWait, "the writes of both sides waiting", func() (bool, string) {
		r, err := ctl.Replication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r.Pending["us-east-1>eu-west-1"] == 1 && r.Pending["eu-west-1>us-east-1"] == 1, fmt.Sprint(r.Pending)
	})
	regions, err := ctl.Regions(ctx)
	if err != nil || fmt.Sprint(regions.Down) != "[eu-west-1]" {
		t.Fatalf("regions while eu-west-1 is down: %+v, %v", regions, err)
	}
	if _, err := ctl.SetReplicationLag(ctx, "20ms"); err != nil {
		t.Fatal(err)
	}
	r, err := ctl.Replication(ctx)
	if err != nil || len(r.Pending) != 2 {
		t.Fatalf("replication to and from a Region that is down moved on: %+v, %v", r, err)
	}
	if err := ctl.RegionUp(ctx, otherRegion); err != nil {
		t.Fatal(err)
	}
	waitItem(ctx, t, away, "partitioned", "from-home", "1")
	waitItem(ctx, t, home, "partitioned", "from-away", "1")
}

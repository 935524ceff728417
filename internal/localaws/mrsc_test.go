package localaws_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

const witnessRegion = "us-west-2"

// strongUpdate asks for an MRSC global table of name with a replica in
// otherRegion and a witness in witness ("" for none).
func strongUpdate(name, witness string) *dynamodb.UpdateTableInput {
	return localawstest.StrongGlobalTableInput(name, otherRegion, witness)
}

// TestGlobalTableStrongConsistency creates an MRSC global table (two
// replicas and a witness) and checks what DynamoDB documents of it: both
// replicas describe it as STRONG with its witness, and it refuses
// transactions and Time to Live while single writes work and replicate.
func TestGlobalTableStrongConsistency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	home, away := dynamodb.NewFromConfig(localawstest.Config(s)), dynamodb.NewFromConfig(localawstest.RegionConfig(s, otherRegion))
	if _, err := home.CreateTable(ctx, localawstest.TableInput("strong", "pk", "", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := home.UpdateTable(ctx, strongUpdate("strong", witnessRegion)); err != nil {
		t.Fatal(err)
	}
	for region, c := range map[string]*dynamodb.Client{"home": home, otherRegion: eventuallyTable(ctx, t, away, "strong")} {
		localawstest.EventuallyState(t, replicaWait, region+" describing an ACTIVE MRSC table", func() (bool, string) {
			d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("strong")})
			if err != nil {
				t.Fatal(err)
			}
			tb := d.Table
			ok := tb.MultiRegionConsistency == ddbtypes.MultiRegionConsistencyStrong && len(tb.Replicas) == 1 &&
				tb.Replicas[0].ReplicaStatus == ddbtypes.ReplicaStatusActive &&
				len(tb.GlobalTableWitnesses) == 1 && aws.ToString(tb.GlobalTableWitnesses[0].RegionName) == witnessRegion
			return ok, fmt.Sprintf("consistency %q, replicas %+v, witnesses %+v", tb.MultiRegionConsistency, tb.Replicas, tb.GlobalTableWitnesses)
		})
	}

	_, err := home.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String("strong"), Item: item("a", "1")}}}})
	wantRefusal(t, err, "TransactWriteItems")
	_, err = away.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []ddbtypes.TransactGetItem{
		{Get: &ddbtypes.Get{TableName: aws.String("strong"), Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "a"}}}}}})
	wantRefusal(t, err, "TransactGetItems")
	_, err = home.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("strong"),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)}})
	wantRefusal(t, err, "Time to Live")

	if _, err := home.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("strong"), Item: item("a", "1")}); err != nil {
		t.Fatal(err)
	}
	waitItem(ctx, t, away, "strong", "a", "1")
}

func wantRefusal(t *testing.T, err error, operation string) {
	t.Helper()
	localawstest.WantCode(t, err, "ValidationException", operation+" on an MRSC table")
	if !strings.Contains(err.Error(), operation+" is not supported") || !strings.Contains(err.Error(), "STRONG") {
		t.Errorf("%s on an MRSC table: %v, want it named as not supported with strong consistency", operation, err)
	}
}

// TestGlobalTableStrongConsistencyRefusals checks UpdateTable's rules for
// MultiRegionConsistency: a known mode, only when a global table is
// created, and for STRONG an empty table without TTL in exactly three
// Regions, the witness one of them; an MREC global table says EVENTUAL.
func TestGlobalTableStrongConsistencyRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t)
	home := dynamodb.NewFromConfig(localawstest.Config(s))
	for _, name := range []string{"empty", "full", "ttl"} {
		if _, err := home.CreateTable(ctx, localawstest.TableInput(name, "pk", "", "")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := home.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("full"), Item: item("a", "1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := home.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("ttl"),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	badMode := strongUpdate("empty", witnessRegion)
	badMode.MultiRegionConsistency = "SOMETIMES"
	noReplica := &dynamodb.UpdateTableInput{TableName: aws.String("empty"), MultiRegionConsistency: ddbtypes.MultiRegionConsistencyStrong}
	eventualWitness := strongUpdate("empty", witnessRegion)
	eventualWitness.MultiRegionConsistency = ddbtypes.MultiRegionConsistencyEventual
	for _, c := range []struct {
		name, fragment string
		in             *dynamodb.UpdateTableInput
	}{
		{"an unknown mode", "EVENTUAL, STRONG", badMode},
		{"a mode without a replica created", "only when ReplicaUpdates create a global table", noReplica},
		{"a witness of an MREC table", "only for a global table with MultiRegionConsistency STRONG", eventualWitness},
		{"two Regions", "exactly 3 Regions", strongUpdate("empty", "")},
		{"the witness in a replica's Region", "a witness must be in a Region without a replica", strongUpdate("empty", otherRegion)},
		{"a table with items", "must be empty", strongUpdate("full", witnessRegion)},
		{"a table with TTL", "Time to Live is not supported", strongUpdate("ttl", witnessRegion)},
	} {
		_, err := home.UpdateTable(ctx, c.in)
		localawstest.WantCode(t, err, "ValidationException", c.name)
		if !strings.Contains(err.Error(), c.fragment) {
			t.Errorf("%s: %v, want a message containing %q", c.name, err, c.fragment)
		}
	}

	away := dynamodb.NewFromConfig(localawstest.RegionConfig(s, otherRegion))
	globalTable(ctx, t, home, away, "mrec")
	d, err := home.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("mrec")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Table.MultiRegionConsistency != ddbtypes.MultiRegionConsistencyEventual || len(d.Table.GlobalTableWitnesses) != 0 {
		t.Errorf("an MREC global table describes consistency %q and witnesses %+v, want EVENTUAL and none", d.Table.MultiRegionConsistency, d.Table.GlobalTableWitnesses)
	}
	strong := strongUpdate("mrec", witnessRegion)
	strong.ReplicaUpdates[0].Create.RegionName = aws.String("ap-south-1")
	_, err = home.UpdateTable(ctx, strong)
	localawstest.WantCode(t, err, "ValidationException", "changing a global table's mode")
	if !strings.Contains(err.Error(), "cannot be changed") {
		t.Errorf("changing a global table's mode: %v, want it refused as unchangeable", err)
	}
	single, err := home.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("empty")})
	if err != nil {
		t.Fatal(err)
	}
	if single.Table.MultiRegionConsistency != "" {
		t.Errorf("a table without replicas describes consistency %q, want none", single.Table.MultiRegionConsistency)
	}
}

package localaws_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/eventpattern"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestESMStreamsTTLUserIdentity checks that the records the event source
// mapping poller reads carry a TTL delete's userIdentity in Lambda's
// spelling ({"type","principalId"}), which the function receives and
// filters match, not in GetRecords' spelling ({"Type","PrincipalId"}).
func TestESMStreamsTTLUserIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := localawstest.Start(t, func(o *localaws.Options) { o.TTLSweepInterval = 50 * time.Millisecond })
	ddb := dynamodb.NewFromConfig(localawstest.Config(s))
	out, err := ddb.CreateTable(ctx, localawstest.TableInput("ttl-table", "pk", "", ddbtypes.StreamViewTypeKeysOnly))
	if err != nil {
		t.Fatal(err)
	}
	streamArn := aws.ToString(out.TableDescription.LatestStreamArn)
	if _, err := ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("ttl-table"),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	expired := strconv.FormatInt(time.Now().Unix()-60, 10)
	if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("ttl-table"), Item: map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: "a"}, "exp": &ddbtypes.AttributeValueMemberN{Value: expired},
	}}); err != nil {
		t.Fatal(err)
	}
	streams := localaws.MappingStreams(s.DynamoDB().Streams())
	shards, err := streams.Shards(streamArn)
	if err != nil || len(shards) != 1 {
		t.Fatalf("shards of the stream: %v, %v; want one", shards, err)
	}
	var recs []esm.StreamRecord
	localawstest.EventuallyState(t, 20*time.Second, "the INSERT and the TTL REMOVE on the stream", func() (bool, string) {
		var err error
		recs, _, err = streams.Records(streamArn, shards[0].ID, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(recs) == 2, fmt.Sprintf("%d stream records", len(recs))
	})
	if got, want := string(recs[1].UserIdentity), `{"type":"Service","principalId":"dynamodb.amazonaws.com"}`; recs[1].EventName != "REMOVE" || got != want {
		t.Fatalf("TTL record %s userIdentity %s, want REMOVE %s", recs[1].EventName, got, want)
	}
	if recs[0].UserIdentity != nil {
		t.Errorf("the user's INSERT has userIdentity %s", recs[0].UserIdentity)
	}
	m, err := eventpattern.Compile(`{"userIdentity":{"type":["Service"],"principalId":["dynamodb.amazonaws.com"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Matches([]byte(`{"eventName":"REMOVE","userIdentity":` + string(recs[1].UserIdentity) + `}`)) {
		t.Error("a userIdentity filter does not match the TTL record")
	}
}

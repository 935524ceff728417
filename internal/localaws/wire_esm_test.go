package localaws

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/eventpattern"
)

// TestESMStreamsTTLUserIdentity checks that the records the event source
// mapping poller reads carry a TTL delete's userIdentity in Lambda's
// spelling ({"type","principalId"}), which the function receives and
// filters match, not in GetRecords' spelling ({"Type","PrincipalId"}).
func TestESMStreamsTTLUserIdentity(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Start(ctx, Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), TTLSweepInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	ddb := dynamodb.NewFromConfig(aws.Config{
		Region: s.Options().Region, BaseEndpoint: aws.String(s.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCALADMIN", "secret", ""),
	})
	out, err := ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("ttl-table"),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeKeysOnly},
	})
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
	streams := MappingStreams(s.DynamoDB().Streams())
	shards, err := streams.Shards(streamArn)
	if err != nil || len(shards) != 1 {
		t.Fatalf("shards of the stream: %v, %v; want one", shards, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		recs, _, err := streams.Records(streamArn, shards[0].ID, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 2 {
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
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d stream records, want the INSERT and the TTL REMOVE", len(recs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

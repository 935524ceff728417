package streamrecord

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// A record as Lambda delivers it from a NEW_AND_OLD_IMAGES stream.
const streamJSON = `{"Records":[{
  "eventID":"c4ca4238a0b923820dcc509a6f75849b","eventName":"INSERT","eventVersion":"1.1",
  "eventSource":"aws:dynamodb","awsRegion":"us-east-1",
  "dynamodb":{
    "ApproximateCreationDateTime":1796033700,
    "Keys":{"PK":{"S":"ORDER#1234"},"SK":{"S":"OUTBOX#01JDQ8Z7K5V6W3X2Y1Z0ABCDEF"}},
    "NewImage":{
      "PK":{"S":"ORDER#1234"},
      "SK":{"S":"OUTBOX#01JDQ8Z7K5V6W3X2Y1Z0ABCDEF"},
      "eventId":{"S":"01JDQ8Z7K5V6W3X2Y1Z0ABCDEF"},
      "source":{"S":"com.example.orders"},
      "detailType":{"S":"OrderPlaced"},
      "detail":{"S":"{\"orderId\":\"1234\",\"total\":42.5}"},
      "occurredAt":{"S":"2026-11-30T10:15:00.123Z"},
      "status":{"S":"PENDING"},
      "outboxPendingShard":{"S":"PENDING#7"},
      "outboxPendingSince":{"N":"1796033700123"},
      "outboxVersion":{"N":"1"},
      "traceHeader":{"S":"Root=1-5759e988-bd862e3fe1be46a994272793"},
      "flags":{"BOOL":true},
      "nothing":{"NULL":true},
      "blob":{"B":"aGVsbG8="},
      "tags":{"SS":["a","b"]},
      "sizes":{"NS":["1","2.5"]},
      "blobs":{"BS":["aGVsbG8=","d29ybGQ="]},
      "lines":{"L":[{"S":"x"},{"N":"3"},{"M":{"k":{"S":"v"}}}]},
      "meta":{"M":{"by":{"S":"api"},"empty":{"M":{}}}}
    },
    "SequenceNumber":"4000000000000000001000","SizeBytes":512,"StreamViewType":"NEW_AND_OLD_IMAGES"
  },
  "eventSourceARN":"arn:aws:dynamodb:us-east-1:123456789012:table/orders/stream/2026-11-30T00:00:00.000"
}]}`

func TestImage(t *testing.T) {
	t.Parallel()
	var ev events.DynamoDBEvent
	if err := json.Unmarshal([]byte(streamJSON), &ev); err != nil {
		t.Fatal(err)
	}
	item, err := Image(ev.Records[0].Change.NewImage)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		"flags":   &types.AttributeValueMemberBOOL{Value: true},
		"nothing": &types.AttributeValueMemberNULL{Value: true},
		"blob":    &types.AttributeValueMemberB{Value: []byte("hello")},
		"tags":    &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"sizes":   &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		"blobs":   &types.AttributeValueMemberBS{Value: [][]byte{[]byte("hello"), []byte("world")}},
		"lines": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberN{Value: "3"},
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "v"}}},
		}},
		"meta": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"by":    &types.AttributeValueMemberS{Value: "api"},
			"empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		}},
		"outboxPendingSince": &types.AttributeValueMemberN{Value: "1796033700123"},
	}
	for name, w := range want {
		if !reflect.DeepEqual(item[name], w) {
			t.Errorf("%s = %#v, want %#v", name, item[name], w)
		}
	}

	r, err := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}.WithDefaults().ParseItem(item)
	if err != nil {
		t.Fatalf("ParseItem: %v", err)
	}
	if r.EventID != "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF" || r.PartitionKey != "ORDER#1234" || r.PendingSince != 1796033700123 ||
		r.TraceHeader == "" || string(r.Detail) != `{"orderId":"1234","total":42.5}` || r.Status != outbox.StatusPending {
		t.Errorf("parsed %+v", r)
	}
	if sk, ok := String(ev.Records[0].Change.Keys, "SK"); !ok || sk != "OUTBOX#01JDQ8Z7K5V6W3X2Y1Z0ABCDEF" {
		t.Errorf("String(Keys, SK) = %q, %v", sk, ok)
	}
	if _, ok := String(ev.Records[0].Change.NewImage, "flags"); ok {
		t.Error("String of a BOOL attribute succeeded")
	}
}

func TestImageNil(t *testing.T) {
	t.Parallel()
	item, err := Image(nil)
	if item != nil || err != nil {
		t.Errorf("Image(nil) = %v, %v", item, err)
	}
}

func TestAttributeValueZero(t *testing.T) {
	t.Parallel()
	// The zero value was not decoded from JSON: an error, not a panic.
	if _, err := AttributeValue(events.DynamoDBAttributeValue{}); err == nil {
		t.Error("zero value converted without error")
	}
}

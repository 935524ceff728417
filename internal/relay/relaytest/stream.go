package relaytest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// StreamRecord describes one record of a DynamoDB stream batch.
type StreamRecord struct {
	// EventName is INSERT (the default), MODIFY or REMOVE.
	EventName string
	// NewImage and OldImage are the item images; either may be nil.
	NewImage map[string]ddb.AttributeValue
	OldImage map[string]ddb.AttributeValue
	// Keys defaults to the table's key attributes of NewImage (or OldImage).
	Keys map[string]ddb.AttributeValue
	// SequenceNumber defaults to a number derived from the record's position.
	SequenceNumber string
	// EventID defaults to one derived from the position.
	EventID string
}

// StreamJSON returns the records as a Lambda DynamoDB stream event, in the
// JSON format Lambda sends.
func StreamJSON(table outbox.Table, recs ...StreamRecord) []byte {
	type change struct {
		ApproximateCreationDateTime int64          `json:"ApproximateCreationDateTime"`
		Keys                        map[string]any `json:"Keys"`
		NewImage                    map[string]any `json:"NewImage,omitempty"`
		OldImage                    map[string]any `json:"OldImage,omitempty"`
		SequenceNumber              string         `json:"SequenceNumber"`
		SizeBytes                   int            `json:"SizeBytes"`
		StreamViewType              string         `json:"StreamViewType"`
	}
	type record struct {
		EventID        string `json:"eventID"`
		EventName      string `json:"eventName"`
		EventVersion   string `json:"eventVersion"`
		EventSource    string `json:"eventSource"`
		AWSRegion      string `json:"awsRegion"`
		DynamoDB       change `json:"dynamodb"`
		EventSourceARN string `json:"eventSourceARN"`
	}
	out := struct {
		Records []record `json:"Records"`
	}{Records: []record{}}
	for i, r := range recs {
		name := r.EventName
		if name == "" {
			name = "INSERT"
		}
		keys := r.Keys
		if keys == nil {
			img := r.NewImage
			if img == nil {
				img = r.OldImage
			}
			keys = map[string]ddb.AttributeValue{}
			for _, k := range []string{table.PartitionKey, table.SortKey} {
				if v, ok := img[k]; ok {
					keys[k] = v
				}
			}
		}
		seq := r.SequenceNumber
		if seq == "" {
			seq = SequenceNumber(i)
		}
		id := r.EventID
		if id == "" {
			id = fmt.Sprintf("c81e728d9d4c2f636f067f89cc14862%d", i)
		}
		view := "NEW_AND_OLD_IMAGES"
		if r.NewImage == nil && r.OldImage == nil {
			view = "KEYS_ONLY"
		}
		out.Records = append(out.Records, record{
			EventID: id, EventName: name, EventVersion: "1.1", EventSource: "aws:dynamodb", AWSRegion: "us-east-1",
			DynamoDB: change{
				ApproximateCreationDateTime: 1796033700,
				Keys:                        Image(keys),
				NewImage:                    Image(r.NewImage),
				OldImage:                    Image(r.OldImage),
				SequenceNumber:              seq,
				SizeBytes:                   256,
				StreamViewType:              view,
			},
			EventSourceARN: "arn:aws:dynamodb:us-east-1:123456789012:table/" + table.Name + "/stream/2026-11-30T00:00:00.000",
		})
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return b
}

// StreamEvent decodes StreamJSON with aws-lambda-go's events types, as the
// Lambda runtime does.
func StreamEvent(table outbox.Table, recs ...StreamRecord) events.DynamoDBEvent {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(StreamJSON(table, recs...), &ev); err != nil {
		panic(err)
	}
	return ev
}

// SequenceNumber is the default sequence number of the record at position i.
func SequenceNumber(i int) string { return fmt.Sprintf("4%020d", 1000+i) }

// Image returns an item in DynamoDB JSON, as stream records carry it.
func Image(item map[string]ddb.AttributeValue) map[string]any {
	if item == nil {
		return nil
	}
	m := make(map[string]any, len(item))
	for k, v := range item {
		m[k] = Value(v)
	}
	return m
}

// Value returns one attribute value in DynamoDB JSON.
func Value(v ddb.AttributeValue) map[string]any {
	switch v := v.(type) {
	case *ddb.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *ddb.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *ddb.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *ddb.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *ddb.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *ddb.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *ddb.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *ddb.AttributeValueMemberBS:
		bs := make([]string, len(v.Value))
		for i, b := range v.Value {
			bs[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string]any{"BS": bs}
	case *ddb.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = Value(e)
		}
		return map[string]any{"L": l}
	case *ddb.AttributeValueMemberM:
		return map[string]any{"M": Image(v.Value)}
	}
	panic(fmt.Sprintf("relaytest: unsupported attribute value %T", v))
}

// Clock is the fixed time of the records built by Records.
var Clock = time.Date(2026, 11, 30, 10, 15, 0, 123e6, time.UTC)

// Records returns n valid pending records for table, with detail objects of
// about detailBytes bytes (at least a few). In a shared table the partition
// key is the aggregate's ("ORDER#<i>").
func Records(table outbox.Table, n, detailBytes int) []outbox.Record {
	w, err := outbox.NewWriter(nil, table, outbox.WithClock(func() time.Time { return Clock }))
	if err != nil {
		panic(err)
	}
	records := make([]outbox.Record, n)
	for i := range records {
		pad := strings.Repeat("x", max(0, detailBytes-40))
		e := outbox.Event{
			Source:     "com.example.orders",
			DetailType: "OrderPlaced",
			Detail:     json.RawMessage(fmt.Sprintf(`{"orderId":"%d","pad":"%s"}`, i, pad)),
			OccurredAt: Clock.Add(time.Duration(i) * time.Millisecond),
		}
		if table.WithDefaults().Layout == outbox.LayoutShared {
			e.PartitionKey = fmt.Sprintf("ORDER#%d", i)
		}
		_, r, err := w.Put(e)
		if err != nil {
			panic(err)
		}
		records[i] = r
	}
	return records
}

// Inserts returns the INSERT stream records of records.
func Inserts(table outbox.Table, records []outbox.Record) []StreamRecord {
	recs := make([]StreamRecord, len(records))
	for i, r := range records {
		recs[i] = StreamRecord{NewImage: table.Item(r)}
	}
	return recs
}

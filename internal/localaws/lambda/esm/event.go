package esm

import (
	"bytes"
	"encoding/json"
	"time"
)

// eventRecord is one record of the event Lambda sends for a DynamoDB stream
// ({"Records":[…]}), in Lambda's field order.
type eventRecord struct {
	EventID        string          `json:"eventID"`
	EventName      string          `json:"eventName"`
	EventVersion   string          `json:"eventVersion"`
	EventSource    string          `json:"eventSource"`
	AWSRegion      string          `json:"awsRegion"`
	DynamoDB       eventDynamoDB   `json:"dynamodb"`
	EventSourceARN string          `json:"eventSourceARN"`
	UserIdentity   json.RawMessage `json:"userIdentity,omitempty"`
}

type eventDynamoDB struct {
	ApproximateCreationDateTime int64           `json:"ApproximateCreationDateTime"`
	Keys                        json.RawMessage `json:"Keys,omitempty"`
	NewImage                    json.RawMessage `json:"NewImage,omitempty"`
	OldImage                    json.RawMessage `json:"OldImage,omitempty"`
	SequenceNumber              string          `json:"SequenceNumber"`
	SizeBytes                   int64           `json:"SizeBytes"`
	StreamViewType              string          `json:"StreamViewType"`
}

// lambdaRecord renders a stream record as Lambda delivers it.
func lambdaRecord(r StreamRecord, region, streamArn string) []byte {
	v := r.EventVersion
	if v == "" {
		v = "1.1"
	}
	e := eventRecord{
		EventID:      r.EventID,
		EventName:    r.EventName,
		EventVersion: v,
		EventSource:  "aws:dynamodb",
		AWSRegion:    region,
		DynamoDB: eventDynamoDB{
			ApproximateCreationDateTime: r.ApproximateCreationDateTime.Unix(),
			Keys:                        nonEmpty(r.Keys),
			NewImage:                    nonEmpty(r.NewImage),
			OldImage:                    nonEmpty(r.OldImage),
			SequenceNumber:              r.SequenceNumber,
			SizeBytes:                   r.SizeBytes,
			StreamViewType:              r.StreamViewType,
		},
		EventSourceARN: streamArn,
		UserIdentity:   nonEmpty(r.UserIdentity),
	}
	b, _ := json.Marshal(e)
	return b
}

func nonEmpty(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

// eventPayload joins rendered records into {"Records":[…]}.
func eventPayload(recs []*pendingRecord) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"Records":[`)
	for i, r := range recs {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(r.json)
	}
	buf.WriteString(`]}`)
	return buf.Bytes()
}

// batchItemFailures parses a ReportBatchItemFailures response. ok is false
// when the response reports failures Lambda cannot use (an empty, null or
// unknown itemIdentifier), which fails the whole batch. lowest is the index
// of the lowest failed record, -1 when none failed.
func batchItemFailures(out []byte, batch []*pendingRecord) (lowest int, ok bool) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 || string(out) == "null" {
		return -1, true
	}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier *string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		// Not an object with batchItemFailures (for example a string):
		// Lambda treats an unparseable response as success.
		return -1, true
	}
	lowest = -1
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == nil || *f.ItemIdentifier == "" {
			return -1, false
		}
		idx := -1
		for i, r := range batch {
			if r.rec.SequenceNumber == *f.ItemIdentifier {
				idx = i
				break
			}
		}
		if idx < 0 {
			return -1, false
		}
		if lowest < 0 || idx < lowest {
			lowest = idx
		}
	}
	return lowest, true
}

// OnFailureRecord is the invocation record sent to the on-failure
// destination of a DynamoDB stream mapping.
type OnFailureRecord struct {
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionArn            string `json:"functionArn"`
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError"`
	} `json:"responseContext"`
	Version            string `json:"version"`
	Timestamp          string `json:"timestamp"`
	DDBStreamBatchInfo struct {
		ShardID                         string `json:"shardId"`
		StartSequenceNumber             string `json:"startSequenceNumber"`
		EndSequenceNumber               string `json:"endSequenceNumber"`
		ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
		ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
		BatchSize                       int    `json:"batchSize"`
		StreamArn                       string `json:"streamArn"`
	} `json:"DDBStreamBatchInfo"`
}

// Conditions of on-failure records.
const (
	ConditionRetryAttemptsExhausted = "RetryAttemptsExhausted"
	ConditionRecordAgeExceeded      = "RecordAgeExceeded"
)

// lastResponse describes the last invocation of a batch.
type lastResponse struct {
	requestID     string
	statusCode    int
	functionError string
}

func onFailureRecord(now time.Time, fnArn, streamArn, shardID, condition string, invokes int, resp lastResponse, batch []*pendingRecord) OnFailureRecord {
	var r OnFailureRecord
	r.RequestContext.RequestID = resp.requestID
	r.RequestContext.FunctionArn = fnArn
	r.RequestContext.Condition = condition
	r.RequestContext.ApproximateInvokeCount = invokes
	r.ResponseContext.StatusCode = resp.statusCode
	r.ResponseContext.ExecutedVersion = "$LATEST"
	if q := lastQualifier(fnArn); q != "" {
		r.ResponseContext.ExecutedVersion = q
	}
	r.ResponseContext.FunctionError = resp.functionError
	r.Version = "1.0"
	r.Timestamp = now.UTC().Format("2006-01-02T15:04:05.000Z")
	first, last := batch[0].rec, batch[len(batch)-1].rec
	b := &r.DDBStreamBatchInfo
	b.ShardID = shardID
	b.StartSequenceNumber = first.SequenceNumber
	b.EndSequenceNumber = last.SequenceNumber
	b.ApproximateArrivalOfFirstRecord = first.ApproximateCreationDateTime.UTC().Format(time.RFC3339)
	b.ApproximateArrivalOfLastRecord = last.ApproximateCreationDateTime.UTC().Format(time.RFC3339)
	b.BatchSize = len(batch)
	b.StreamArn = streamArn
	return r
}

package esm

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
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

// batchItemFailures parses a ReportBatchItemFailures response to a stream
// batch, whose items are identified by sequence number. ok is false when
// the response reports failures Lambda cannot use, which fails the whole
// batch. lowest is the index of the lowest failed record, -1 when none
// failed.
func batchItemFailures(out []byte, batch []*pendingRecord) (lowest int, ok bool) {
	ids := make([]string, len(batch))
	for i, r := range batch {
		ids[i] = r.rec.SequenceNumber
	}
	failed, ok := failedItems(out, ids)
	if !ok {
		return -1, false
	}
	lowest = -1
	for _, i := range failed {
		if lowest < 0 || i < lowest {
			lowest = i
		}
	}
	return lowest, true
}

// failedItems parses a ReportBatchItemFailures response
// ({"batchItemFailures":[{"itemIdentifier":"…"}]}) against the batch's item
// identifiers (sequence numbers of a stream, message ids of a queue) and
// returns the indexes of the failed items. ok is false when an identifier
// is empty, null or not of the batch, which fails the whole batch; an
// empty, null or unparseable response is a success.
func failedItems(out []byte, ids []string) (failed []int, ok bool) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 || string(out) == "null" {
		return nil, true
	}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier *string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		// Not an object with batchItemFailures (for example a string):
		// Lambda treats an unparseable response as success.
		return nil, true
	}
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == nil || *f.ItemIdentifier == "" {
			return nil, false
		}
		idx := slices.Index(ids, *f.ItemIdentifier)
		if idx < 0 {
			return nil, false
		}
		failed = append(failed, idx)
	}
	return failed, true
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

// sqsEventRecord is one record of the event Lambda sends for an SQS queue,
// in Lambda's field names ("Using Lambda with Amazon SQS", example event).
type sqsEventRecord struct {
	MessageID              string                       `json:"messageId"`
	ReceiptHandle          string                       `json:"receiptHandle"`
	Body                   string                       `json:"body"`
	Attributes             map[string]string            `json:"attributes"`
	MessageAttributes      map[string]sqsEventAttribute `json:"messageAttributes"`
	MD5OfMessageAttributes string                       `json:"md5OfMessageAttributes,omitempty"`
	MD5OfBody              string                       `json:"md5OfBody"`
	EventSource            string                       `json:"eventSource"`
	EventSourceARN         string                       `json:"eventSourceARN"`
	AWSRegion              string                       `json:"awsRegion"`
}

type sqsEventAttribute struct {
	StringValue      *string  `json:"stringValue,omitempty"`
	BinaryValue      []byte   `json:"binaryValue,omitempty"`
	StringListValues []string `json:"stringListValues"`
	BinaryListValues []string `json:"binaryListValues"`
	DataType         string   `json:"dataType"`
}

// sqsRecord renders a received message as Lambda delivers it: every system
// attribute (ApproximateReceiveCount, SentTimestamp, SenderId,
// ApproximateFirstReceiveTimestamp, and for FIFO queues SequenceNumber,
// MessageGroupId and MessageDeduplicationId) and every message attribute.
func sqsRecord(r sqs.Received, region, queueArn string) []byte {
	e := sqsEventRecord{
		MessageID: r.MessageID, ReceiptHandle: r.ReceiptHandle, Body: r.Body,
		Attributes: r.Attributes, MessageAttributes: map[string]sqsEventAttribute{},
		MD5OfMessageAttributes: r.MD5OfMessageAttributes, MD5OfBody: r.MD5OfBody,
		EventSource: "aws:sqs", EventSourceARN: queueArn, AWSRegion: region,
	}
	if e.Attributes == nil {
		e.Attributes = map[string]string{}
	}
	for k, a := range r.MessageAttributes {
		ea := sqsEventAttribute{BinaryValue: a.BinaryValue, StringListValues: []string{}, BinaryListValues: []string{}, DataType: a.DataType}
		if a.BinaryValue == nil {
			v := a.StringValue
			ea.StringValue = &v
		}
		e.MessageAttributes[k] = ea
	}
	b, _ := json.Marshal(e)
	return b
}

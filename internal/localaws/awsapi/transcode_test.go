package awsapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	cwschemas "github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	sqsschemas "github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	"github.com/aws/smithy-go/encoding/cbor"
)

// The awsQuery forms are those smithy-go's query serializer writes for the
// SQS and CloudWatch models: flattened maps and lists under xmlName, and
// member/entry wrappers otherwise.
func TestQueryFormToJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		form string
		in   OperationShapes
		want string
	}{
		{"flattened maps with xmlName", "Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=5&Tag.1.Key=team&Tag.1.Value=outbox",
			OperationShapes{Input: sqsschemas.CreateQueueRequest},
			`{"Attributes":{"DelaySeconds":"5"},"QueueName":"q","tags":{"team":"outbox"}}`},
		{"flattened lists of structures with nested maps and integers",
			"SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=x&SendMessageBatchRequestEntry.1.DelaySeconds=3" +
				"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=k&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=String" +
				"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue=v&SendMessageBatchRequestEntry.2.Id=b&SendMessageBatchRequestEntry.2.MessageBody=y&QueueUrl=u",
			OperationShapes{Input: sqsschemas.SendMessageBatchRequest},
			`{"Entries":[{"DelaySeconds":3,"Id":"a","MessageAttributes":{"k":{"DataType":"String","StringValue":"v"}},"MessageBody":"x"},{"Id":"b","MessageBody":"y"}],"QueueUrl":"u"}`},
		{"member lists, doubles and booleans",
			"AlarmName=a&EvaluationPeriods=2&Threshold=0.5&ActionsEnabled=false&Dimensions.member.1.Name=Q&Dimensions.member.1.Value=dlq&AlarmActions.member.1=arn",
			OperationShapes{Input: cwschemas.PutMetricAlarmInput},
			`{"ActionsEnabled":false,"AlarmActions":["arn"],"AlarmName":"a","Dimensions":[{"Name":"Q","Value":"dlq"}],"EvaluationPeriods":2,"Threshold":0.5}`},
		{"an empty list", "AlarmNames=", OperationShapes{Input: cwschemas.DeleteAlarmsInput}, `{"AlarmNames":[]}`},
	}
	for _, tc := range tests {
		form, err := url.ParseQuery(tc.form)
		if err != nil {
			t.Fatal(err)
		}
		got, err := transcodeRequest(Query, nil, form, tc.in.Input)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestResultToXML(t *testing.T) {
	t.Parallel()
	tree, err := jsonTree(map[string]any{
		"Attributes": map[string]string{"QueueArn": "arn", "DelaySeconds": "0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeXMLShape(&buf, tree, sqsschemas.GetQueueAttributesResult)
	want := `<Attribute><Name>DelaySeconds</Name><Value>0</Value></Attribute><Attribute><Name>QueueArn</Name><Value>arn</Value></Attribute>`
	if buf.String() != want {
		t.Fatalf("flattened map:\n got %s\nwant %s", buf.String(), want)
	}

	tree, _ = jsonTree(map[string]any{"MetricAlarms": []any{map[string]any{
		"AlarmName": "a<b", "Threshold": 0.5, "Dimensions": []any{map[string]any{"Name": "Q", "Value": "dlq"}},
		"StateUpdatedTimestamp": json.Number("1796033700.123"),
	}}})
	buf.Reset()
	writeXMLShape(&buf, tree, cwschemas.DescribeAlarmsOutput)
	want = `<MetricAlarms><member><AlarmName>a&lt;b</AlarmName><Dimensions><member><Name>Q</Name><Value>dlq</Value></member></Dimensions>` +
		`<StateUpdatedTimestamp>2026-11-30T10:15:00.123Z</StateUpdatedTimestamp><Threshold>0.5</Threshold></member></MetricAlarms>`
	if buf.String() != want {
		t.Fatalf("member lists and timestamps:\n got %s\nwant %s", buf.String(), want)
	}
}

func TestCBORTranscoding(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1796033700123)
	in := cbor.Encode(cbor.Map{"AlarmNames": cbor.List{cbor.String("a")}, "MaxRecords": cbor.Uint(5),
		"StartDate": &cbor.Tag{ID: 1, Value: cbor.Float64(float64(at.UnixMilli()) / 1000)}})
	got, err := transcodeRequest(RPCv2CBOR, in, nil, cwschemas.DescribeAlarmsInput)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"AlarmNames":["a"],"MaxRecords":5,"StartDate":1796033700.123}`; string(got) != want {
		t.Fatalf("CBOR to JSON:\n got %s\nwant %s", got, want)
	}

	tree, _ := jsonTree(map[string]any{"MetricAlarms": []any{map[string]any{"Threshold": 1, "EvaluationPeriods": 2,
		"StateUpdatedTimestamp": json.Number("1796033700.123")}}})
	out, err := cbor.Decode(cbor.Encode(toCBORShape(tree, cwschemas.DescribeAlarmsOutput)))
	if err != nil {
		t.Fatal(err)
	}
	alarm := out.(cbor.Map)["MetricAlarms"].(cbor.List)[0].(cbor.Map)
	if _, ok := alarm["Threshold"].(cbor.Float64); !ok {
		t.Errorf("Threshold (a double) is %T", alarm["Threshold"])
	}
	if _, ok := alarm["EvaluationPeriods"].(cbor.Uint); !ok {
		t.Errorf("EvaluationPeriods (an integer) is %T", alarm["EvaluationPeriods"])
	}
	if tag, ok := alarm["StateUpdatedTimestamp"].(*cbor.Tag); !ok || tag.ID != 1 {
		t.Errorf("StateUpdatedTimestamp is %#v, want tag 1", alarm["StateUpdatedTimestamp"])
	}
}

func TestQueryErrorCarriesQueryCode(t *testing.T) {
	t.Parallel()
	e := NewError("QueueDoesNotExist", "The specified queue does not exist.")
	e.QueryCode = "AWS.SimpleQueueService.NonExistentQueue"
	rec := httptest.NewRecorder()
	WriteError(rec, Spec{Protocol: Query, XMLNamespace: "http://queue.amazonaws.com/doc/2012-11-05/"}, "rid", e)
	body := rec.Body.String()
	for _, want := range []string{`<ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">`, "<Type>Sender</Type>",
		"<Code>AWS.SimpleQueueService.NonExistentQueue</Code>", "<RequestId>rid</RequestId>"} {
		if !strings.Contains(body, want) {
			t.Errorf("error body %s lacks %s", body, want)
		}
	}
	if rec.Code != 400 {
		t.Errorf("status %d, want 400", rec.Code)
	}
}

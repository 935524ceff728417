package cloudwatch

import (
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// xmlNamespace is the xmlns of CloudWatch's awsQuery responses.
const xmlNamespace = "http://monitoring.amazonaws.com/doc/2010-08-01/"

// operations is the table of the operations served: each handler with the
// SDK's Smithy schemas of its input and output, through which the router
// transcodes rpcv2Cbor and awsQuery requests to the JSON form the handlers
// read, and their results back.
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"PutMetricAlarm":      {Handle: withDoc(s.putMetricAlarm), Input: schemas.PutMetricAlarmInput},
		"DescribeAlarms":      {Handle: withDoc(s.describeAlarms), Input: schemas.DescribeAlarmsInput, Output: schemas.DescribeAlarmsOutput},
		"DeleteAlarms":        {Handle: withDoc(s.deleteAlarms), Input: schemas.DeleteAlarmsInput},
		"TagResource":         {Handle: withDoc(s.tagging), Input: schemas.TagResourceInput, Output: schemas.TagResourceOutput},
		"UntagResource":       {Handle: withDoc(s.tagging), Input: schemas.UntagResourceInput, Output: schemas.UntagResourceOutput},
		"PutMetricData":       {Handle: withDoc(s.putMetricData), Input: schemas.PutMetricDataInput},
		"ListMetrics":         {Handle: withDoc(s.listMetrics), Input: schemas.ListMetricsInput, Output: schemas.ListMetricsOutput},
		"GetMetricStatistics": {Handle: withDoc(s.getMetricStatistics), Input: schemas.GetMetricStatisticsInput, Output: schemas.GetMetricStatisticsOutput},
		"ListTagsForResource": {Handle: withDoc(s.tagging), Input: schemas.ListTagsForResourceInput, Output: schemas.ListTagsForResourceOutput},
	}
}

// withDoc decodes the input as a JSON object for h.
func withDoc(h func(*awsapi.Request, doc) (any, error)) func(*awsapi.Request) (any, error) {
	return awsapi.Decoded(func(req *awsapi.Request, in *doc) (any, error) { return h(req, *in) })
}

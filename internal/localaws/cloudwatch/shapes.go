package cloudwatch

import (
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// xmlNamespace is the xmlns of CloudWatch's awsQuery responses.
const xmlNamespace = "http://monitoring.amazonaws.com/doc/2010-08-01/"

// shapes are the SDK's Smithy schemas of the operations served, through
// which the router transcodes rpcv2Cbor and awsQuery requests to the JSON
// form the handlers read, and their results back.
var shapes = awsapi.Shapes{
	"PutMetricAlarm":      {Input: schemas.PutMetricAlarmInput},
	"DescribeAlarms":      {Input: schemas.DescribeAlarmsInput, Output: schemas.DescribeAlarmsOutput},
	"DeleteAlarms":        {Input: schemas.DeleteAlarmsInput},
	"TagResource":         {Input: schemas.TagResourceInput, Output: schemas.TagResourceOutput},
	"UntagResource":       {Input: schemas.UntagResourceInput, Output: schemas.UntagResourceOutput},
	"ListTagsForResource": {Input: schemas.ListTagsForResourceInput, Output: schemas.ListTagsForResourceOutput},
}

package sqs

import (
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// xmlNamespace is the xmlns of SQS's awsQuery responses.
const xmlNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"

// shapes are the SDK's Smithy schemas of the operations served, through
// which the router transcodes awsQuery requests (older SDKs and CLIs) to
// the JSON form the handlers read, and their results back.
var shapes = awsapi.Shapes{
	"CreateQueue":                  {Input: schemas.CreateQueueRequest, Output: schemas.CreateQueueResult},
	"GetQueueUrl":                  {Input: schemas.GetQueueUrlRequest, Output: schemas.GetQueueUrlResult},
	"GetQueueAttributes":           {Input: schemas.GetQueueAttributesRequest, Output: schemas.GetQueueAttributesResult},
	"SetQueueAttributes":           {Input: schemas.SetQueueAttributesRequest},
	"ListQueues":                   {Input: schemas.ListQueuesRequest, Output: schemas.ListQueuesResult},
	"DeleteQueue":                  {Input: schemas.DeleteQueueRequest},
	"PurgeQueue":                   {Input: schemas.PurgeQueueRequest},
	"SendMessage":                  {Input: schemas.SendMessageRequest, Output: schemas.SendMessageResult},
	"SendMessageBatch":             {Input: schemas.SendMessageBatchRequest, Output: schemas.SendMessageBatchResult},
	"ReceiveMessage":               {Input: schemas.ReceiveMessageRequest, Output: schemas.ReceiveMessageResult},
	"DeleteMessage":                {Input: schemas.DeleteMessageRequest},
	"DeleteMessageBatch":           {Input: schemas.DeleteMessageBatchRequest, Output: schemas.DeleteMessageBatchResult},
	"ChangeMessageVisibility":      {Input: schemas.ChangeMessageVisibilityRequest},
	"ChangeMessageVisibilityBatch": {Input: schemas.ChangeMessageVisibilityBatchRequest, Output: schemas.ChangeMessageVisibilityBatchResult},
	"TagQueue":                     {Input: schemas.TagQueueRequest},
	"UntagQueue":                   {Input: schemas.UntagQueueRequest},
	"ListQueueTags":                {Input: schemas.ListQueueTagsRequest, Output: schemas.ListQueueTagsResult},
	"ListDeadLetterSourceQueues":   {Input: schemas.ListDeadLetterSourceQueuesRequest, Output: schemas.ListDeadLetterSourceQueuesResult},
}

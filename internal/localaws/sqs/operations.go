package sqs

import (
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// xmlNamespace is the xmlns of SQS's awsQuery responses.
const xmlNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"

// operations is the table of the operations served: each handler with the
// SDK's Smithy schemas of its input and output, through which the router
// transcodes awsQuery requests (older SDKs and CLIs) to the JSON form the
// handlers read, and their results back.
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"CreateQueue":                  {Handle: awsapi.Decoded(s.createQueue), Input: schemas.CreateQueueRequest, Output: schemas.CreateQueueResult},
		"GetQueueUrl":                  {Handle: awsapi.Decoded(s.getQueueURL), Input: schemas.GetQueueUrlRequest, Output: schemas.GetQueueUrlResult},
		"GetQueueAttributes":           {Handle: awsapi.Decoded(s.getQueueAttributes), Input: schemas.GetQueueAttributesRequest, Output: schemas.GetQueueAttributesResult},
		"SetQueueAttributes":           {Handle: awsapi.Decoded(s.setQueueAttributes), Input: schemas.SetQueueAttributesRequest},
		"ListQueues":                   {Handle: awsapi.Decoded(s.listQueues), Input: schemas.ListQueuesRequest, Output: schemas.ListQueuesResult},
		"DeleteQueue":                  {Handle: awsapi.Decoded(s.deleteQueue), Input: schemas.DeleteQueueRequest},
		"PurgeQueue":                   {Handle: awsapi.Decoded(s.purgeQueue), Input: schemas.PurgeQueueRequest},
		"SendMessage":                  {Handle: awsapi.Decoded(s.sendMessage), Input: schemas.SendMessageRequest, Output: schemas.SendMessageResult},
		"SendMessageBatch":             {Handle: awsapi.Decoded(s.sendMessageBatch), Input: schemas.SendMessageBatchRequest, Output: schemas.SendMessageBatchResult},
		"ReceiveMessage":               {Handle: awsapi.Decoded(s.receiveMessage), Input: schemas.ReceiveMessageRequest, Output: schemas.ReceiveMessageResult},
		"DeleteMessage":                {Handle: awsapi.Decoded(s.deleteMessage), Input: schemas.DeleteMessageRequest},
		"DeleteMessageBatch":           {Handle: awsapi.Decoded(s.deleteMessageBatch), Input: schemas.DeleteMessageBatchRequest, Output: schemas.DeleteMessageBatchResult},
		"ChangeMessageVisibility":      {Handle: awsapi.Decoded(s.changeMessageVisibility), Input: schemas.ChangeMessageVisibilityRequest},
		"ChangeMessageVisibilityBatch": {Handle: awsapi.Decoded(s.changeMessageVisibilityBatch), Input: schemas.ChangeMessageVisibilityBatchRequest, Output: schemas.ChangeMessageVisibilityBatchResult},
		"TagQueue":                     {Handle: awsapi.Decoded(s.tagQueue), Input: schemas.TagQueueRequest},
		"UntagQueue":                   {Handle: awsapi.Decoded(s.untagQueue), Input: schemas.UntagQueueRequest},
		"ListQueueTags":                {Handle: awsapi.Decoded(s.listQueueTags), Input: schemas.ListQueueTagsRequest, Output: schemas.ListQueueTagsResult},
		"ListDeadLetterSourceQueues":   {Handle: awsapi.Decoded(s.listDeadLetterSourceQueues), Input: schemas.ListDeadLetterSourceQueuesRequest, Output: schemas.ListDeadLetterSourceQueuesResult},
	}
}

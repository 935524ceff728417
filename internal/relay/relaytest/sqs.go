package relaytest

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// OpSendMessageBatch is the SQS operation, as counted by AWS.Calls.
const OpSendMessageBatch = "SendMessageBatch"

// SendMessageBatch enforces the limits of 10 messages, 1 MiB (a queue of
// the default maximum message size, SQS's largest) and unique
// ids. Entries fail as EntryError says, the sender's fault unless
// SNSSenderFault (which serves SQS too) says otherwise.
func (f *AWS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	entries := make([]message, len(in.Entries))
	for i, e := range in.Entries {
		entries[i] = message{id: aws.ToString(e.Id), body: aws.ToString(e.MessageBody), attrs: map[string]string{}}
		for name, v := range e.MessageAttributes {
			entries[i].attrs[name] = aws.ToString(v.StringValue)
		}
	}
	results, err := f.sendMessages(ctx, OpSendMessageBatch, "sqs", entries, outbox.TargetLimits[outbox.TargetSQS].BatchBytes)
	if err != nil {
		return nil, err
	}
	out := &sqs.SendMessageBatchOutput{}
	for i, r := range results {
		id := aws.String(entries[i].id)
		if r.code != "" {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: id, Code: aws.String(r.code), Message: aws.String("injected"), SenderFault: r.sender})
		} else {
			out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: id, MessageId: aws.String("sqs-" + r.eventID)})
		}
	}
	return out, nil
}

package relaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// OpSendMessageBatch is the SQS operation, as counted by AWS.Calls.
const OpSendMessageBatch = "SendMessageBatch"

// sqsMaxBatchBytes is the total size of the messages of one call that a
// queue of the default maximum message size accepts.
const sqsMaxBatchBytes = 256 * 1024

// SendMessageBatch enforces the limits of 10 messages, 256 KiB and unique
// ids. Entries fail as EntryError says, the sender's fault unless
// SNSSenderFault (which serves SQS too) says otherwise.
func (f *AWS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	done, err := f.begin(ctx, OpSendMessageBatch)
	defer done()
	if err != nil {
		return nil, err
	}
	if len(in.Entries) == 0 || len(in.Entries) > 10 {
		return nil, apiError("TooManyEntriesInBatchRequest", fmt.Sprintf("%d entries", len(in.Entries)))
	}
	size := 0
	ids := map[string]bool{}
	for _, e := range in.Entries {
		size += len(aws.ToString(e.MessageBody))
		if ids[aws.ToString(e.Id)] {
			return nil, apiError("BatchEntryIdsNotDistinct", "duplicate id")
		}
		ids[aws.ToString(e.Id)] = true
	}
	if size > sqsMaxBatchBytes {
		return nil, apiError("BatchRequestTooLong", fmt.Sprintf("%d bytes", size))
	}
	out := &sqs.SendMessageBatchOutput{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range in.Entries {
		var env outbox.Envelope
		_ = json.Unmarshal([]byte(aws.ToString(e.MessageBody)), &env)
		code := ""
		if f.EntryError != nil {
			code = f.EntryError(env.ID, f.attempt("publish:"+env.ID))
		}
		if code != "" {
			sender := true
			if f.SNSSenderFault != nil {
				sender = f.SNSSenderFault(code)
			}
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String(code), Message: aws.String("injected"), SenderFault: sender})
			continue
		}
		attrs := map[string]string{}
		for name, v := range e.MessageAttributes {
			attrs[name] = aws.ToString(v.StringValue)
		}
		t, _ := time.Parse(time.RFC3339, env.Time)
		f.published = append(f.published, Published{
			Target: "sqs", EventID: env.ID, Source: env.Source, DetailType: env.DetailType,
			Body: aws.ToString(e.MessageBody), Time: t, Attributes: attrs,
		})
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String("sqs-" + env.ID)})
	}
	return out, nil
}

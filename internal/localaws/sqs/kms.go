package sqs

import (
	"fmt"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// awsManagedKey is the AWS managed key for SQS, whose key policy lets every
// principal of the account that may use SQS use it through SQS.
const awsManagedKey = "alias/aws/sqs"

// senderKMSActions are what a producer needs on the customer managed key
// of an SSE-KMS queue ("Key management", Amazon SQS developer guide: "to
// send messages to an encrypted queue, the producer must have the
// kms:GenerateDataKey and kms:Decrypt permissions for the KMS key").
var senderKMSActions = []string{"kms:GenerateDataKey", "kms:Decrypt"}

// queueKey returns the KMS key of a queue encrypted with a customer managed
// key as the resource a producer is authorised on, and the condition keys
// of the request: a key given by alias (the stack has no KMS to resolve
// it) stands for the key "key/alias/<name>" and carries the alias as
// kms:ResourceAliases, so that a policy granting the key through its alias
// (IAM names keys only by key ARN) is the one that allows it. ok is false
// for a queue without such a key.
func (s *Service) queueKey(q *queue) (keyArn string, keys map[string]string, ok bool) {
	s.mu.Lock()
	id := q.attrs["KmsMasterKeyId"]
	s.mu.Unlock()
	switch {
	case id == "" || id == awsManagedKey:
		return "", nil, false
	case strings.HasPrefix(id, "arn:"):
		if i := strings.Index(id, ":alias/"); i >= 0 {
			alias := id[i+1:]
			return id[:i] + ":key/" + alias, map[string]string{"kms:resourcealiases": alias}, true
		}
		return id, nil, true
	case strings.HasPrefix(id, "alias/"):
		return s.env.ARN("kms", "key/"+id), map[string]string{"kms:resourcealiases": id}, true
	default:
		return s.env.ARN("kms", "key/"+id), nil, true
	}
}

// authorizeSenderKMS checks that p may use the queue's customer managed key
// to send, as SQS asks KMS on the producer's behalf; a denial is SQS's
// KmsAccessDenied.
func (s *Service) authorizeSenderKMS(p awsapi.Principal, q *queue) error {
	if p.Admin {
		return nil
	}
	keyArn, keys, ok := s.queueKey(q)
	if !ok {
		return nil
	}
	for _, action := range senderKMSActions {
		if err := s.env.AuthorizeAsContext(p, action, keyArn, keys); err != nil {
			return sqsError("KmsAccessDenied", "KMS.AccessDeniedException",
				"The caller doesn't have the required KMS access: %s is not authorized to perform %s on %s", p.ARN, action, keyArn)
		}
	}
	return nil
}

// AuthorizeSender checks, for a service of the stack that sends to
// queueArn as the principal p (Lambda's on-failure destinations send with
// the function's execution role), what SQS itself asks of a producer
// beyond sqs:SendMessage: the use of the queue's customer managed key.
func (s *Service) AuthorizeSender(p awsapi.Principal, queueArn string) error {
	s.mu.Lock()
	q := s.byARN(queueArn)
	s.mu.Unlock()
	if q == nil {
		return fmt.Errorf("sending to %s: %w", queueArn, errNoQueue())
	}
	return s.authorizeSenderKMS(p, q)
}

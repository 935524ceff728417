package sqs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// keyGrants is an authorizer that allows every SQS action, and a KMS
// action only on the key ARN it holds, with the condition keys it holds;
// it records the KMS requests it was asked.
type keyGrants struct {
	mu      sync.Mutex
	key     string
	keys    map[string]string
	granted bool
	asked   []string
}

func (g *keyGrants) Authorize(p awsapi.Principal, action, resource string) error {
	return g.AuthorizeContext(p, action, resource, nil)
}

func (g *keyGrants) AuthorizeContext(p awsapi.Principal, action, resource string, keys map[string]string) error {
	if p.Admin || strings.HasPrefix(action, "sqs:") {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, action+" "+resource)
	if g.granted && resource == g.key && keys["kms:resourcealiases"] == g.keys["kms:resourcealiases"] {
		return nil
	}
	return errors.New("not granted")
}

// TestSendToAnSSEKMSQueueNeedsTheKey: a producer sends to a queue encrypted
// with a customer managed key only if it may use the key (kms:GenerateDataKey
// and kms:Decrypt), whether the queue names it by id, ARN or alias; the
// AWS managed key asks for nothing. SendMessageBatch and in-process senders
// (AuthorizeSender) are held to the same rule.
func TestSendToAnSSEKMSQueueNeedsTheKey(t *testing.T) {
	t.Parallel()
	const keyID = "1234abcd-12ab-34cd-56ef-1234567890ab"
	cases := []struct {
		name, kmsKey, resource string
		keys                   map[string]string
	}{
		{name: "key id", kmsKey: keyID, resource: "arn:aws:kms:us-east-1:000000000000:key/" + keyID},
		{name: "key ARN", kmsKey: "arn:aws:kms:us-east-1:000000000000:key/" + keyID, resource: "arn:aws:kms:us-east-1:000000000000:key/" + keyID},
		{name: "alias", kmsKey: "alias/orders-dlq", resource: "arn:aws:kms:us-east-1:000000000000:key/alias/orders-dlq",
			keys: map[string]string{"kms:resourcealiases": "alias/orders-dlq"}},
		{name: "alias ARN", kmsKey: "arn:aws:kms:us-east-1:000000000000:alias/orders-dlq", resource: "arn:aws:kms:us-east-1:000000000000:key/alias/orders-dlq",
			keys: map[string]string{"kms:resourcealiases": "alias/orders-dlq"}},
		{name: "AWS managed key", kmsKey: "alias/aws/sqs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stack, svc, admin := start(t, protocols[0])
			ctx := context.Background()
			grants := &keyGrants{key: c.resource, keys: c.keys}
			stack.Env().SetAuthorizer(grants)
			url := createQueue(t, admin, "sealed", map[string]string{"KmsMasterKeyId": c.kmsKey})
			arn := queueArn(t, admin, url)
			role := "arn:aws:iam::000000000000:role/sender"
			sender := awssqs.NewFromConfig(localawstest.RoleConfig(stack, role))
			send := func() error {
				_, err := sender.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")})
				return err
			}
			sendBatch := func() error {
				_, err := sender.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(url),
					Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("x")}}})
				return err
			}
			principal := stack.Env().RolePrincipal(role, "awslambda_esm")
			if c.resource == "" {
				if err := send(); err != nil {
					t.Fatalf("send to a queue with the AWS managed key: %v", err)
				}
				if len(grants.asked) != 0 {
					t.Errorf("KMS asked for the AWS managed key: %v", grants.asked)
				}
				return
			}
			for what, err := range map[string]error{"send": send(), "batch": sendBatch()} {
				var denied *types.KmsAccessDenied
				if !errors.As(err, &denied) {
					t.Errorf("%s without the key: %v, want KmsAccessDenied", what, err)
				}
			}
			if err := svc.AuthorizeSender(principal, arn); err == nil {
				t.Error("AuthorizeSender allowed a sender without the key")
			}
			grants.mu.Lock()
			grants.granted = true
			grants.mu.Unlock()
			if err := send(); err != nil {
				t.Fatalf("send with the key: %v", err)
			}
			if err := sendBatch(); err != nil {
				t.Fatalf("batch with the key: %v", err)
			}
			if err := svc.AuthorizeSender(principal, arn); err != nil {
				t.Errorf("AuthorizeSender with the key: %v", err)
			}
			want := map[string]bool{"kms:GenerateDataKey " + c.resource: false, "kms:Decrypt " + c.resource: false}
			for _, a := range grants.asked {
				if _, ok := want[a]; !ok {
					t.Errorf("KMS asked for %q", a)
				}
				want[a] = true
			}
			for a, seen := range want {
				if !seen {
					t.Errorf("KMS never asked for %q", a)
				}
			}
		})
	}
}

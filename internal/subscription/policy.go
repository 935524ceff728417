package subscription

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// PolicyDocument is an IAM policy document.
type PolicyDocument = awsops.PolicyDocument

// Statement is one statement of a PolicyDocument.
type Statement = awsops.Statement

// QueuePolicy is the queue's resource policy: EventBridge may send to the
// queue on behalf of the subscription's rule (sourceARN), and of nothing
// else; or, for a topic subscription, SNS on behalf of the topic.
func QueuePolicy(queueARN, sourceARN string) PolicyDocument {
	principal := eventBridgeServicePrincipal
	if strings.HasPrefix(sourceARN, "arn:") && strings.Split(sourceARN, ":")[2] == "sns" {
		principal = snsServicePrincipal
	}
	return PolicyDocument{Version: queuePolicyVersion, Statement: []Statement{{
		Sid:       queuePolicySid,
		Effect:    "Allow",
		Principal: map[string]string{"Service": principal},
		Action:    []string{"sqs:SendMessage"},
		Resource:  []string{queueARN},
		Condition: map[string]map[string]string{"ArnEquals": {"aws:SourceArn": sourceARN}},
	}}}
}

// RuleARNOfPolicy returns the rule that a queue policy written by
// QueuePolicy lets send, or "".
func RuleARNOfPolicy(policy string) string {
	var d struct {
		Statement []struct {
			Sid       string                    `json:"Sid"`
			Condition map[string]map[string]any `json:"Condition"`
		} `json:"Statement"`
	}
	if json.Unmarshal([]byte(policy), &d) != nil {
		return ""
	}
	for _, st := range d.Statement {
		if st.Sid != queuePolicySid {
			continue
		}
		for _, op := range []string{"ArnEquals", "ArnLike", "StringEquals"} {
			if s, ok := st.Condition[op]["aws:SourceArn"].(string); ok {
				return s
			}
		}
	}
	return ""
}

// ensurePolicy sets the queue's policy unless it already means doc.
func (c *Provisioner) ensurePolicy(ctx context.Context, url string, doc PolicyDocument) error {
	have, err := c.queue(ctx, url)
	if err != nil && !errors.Is(err, awsops.ErrNotFound) {
		return err
	}
	if err == nil && awsops.SamePolicy(have[attrPolicy], doc.JSON()) {
		return nil
	}
	_, err = c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{attrPolicy: doc.JSON()}})
	return err
}

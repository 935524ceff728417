package iamdifferential

import (
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iam"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// The account, region and resources of the cases.
const (
	account      = "123456789012"
	otherAccount = "210987654321"
	region       = "eu-west-1"
	tableARN     = "arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox"
	streamARN    = tableARN + "/stream/2026-12-04T00:00:00.000"
	queueARN     = "arn:aws:sqs:eu-west-1:123456789012:orders-relay-dlq"
	busARN       = "arn:aws:events:eu-west-1:123456789012:event-bus/default"
	topicARN     = "arn:aws:sns:eu-west-1:123456789012:orders"
	relayLogs    = "/aws/lambda/orders-relay"
	reconLogs    = "/aws/lambda/orders-reconciler"
	logStream    = "2026/12/04/[$LATEST]0123456789abcdef"
	reconcilerFn = "arn:aws:lambda:eu-west-1:123456789012:function:orders-reconciler"
	relayRole    = "arn:aws:iam::123456789012:role/orders-relay"
	relaySession = "arn:aws:sts::123456789012:assumed-role/orders-relay/orders-relay"
	claimBucket  = "orders-claims"
	claimKey     = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	subQueueARN  = "arn:aws:sqs:eu-west-1:123456789012:billing-orders"
	inboxARN     = "arn:aws:dynamodb:eu-west-1:123456789012:table/billing-orders-inbox"
	ruleARN      = "arn:aws:events:eu-west-1:123456789012:rule/billing-orders"
	consumerRole = "arn:aws:sts::123456789012:assumed-role/billing-consumer/s"
)

// defaultKeyPolicy is a KMS key's default key policy: the account's IAM
// policies decide.
const defaultKeyPolicy = `{"Version":"2012-10-17","Statement":[{"Sid":"Enable IAM User Permissions","Effect":"Allow",` +
	`"Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"kms:*","Resource":"*"}]}`

func logStreamARN(group string) string {
	return "arn:aws:logs:eu-west-1:123456789012:log-group:" + group + ":log-stream:" + logStream
}

// req is a request a component makes (allowed) or must not make (denied).
type req struct {
	action, resource string
	call             *stackCall
	context          map[string]string
	sets             map[string][]string
}

// writeLogs are the calls a function makes to write its logs: the stack's
// CloudWatch Logs names their resource.
func writeLogs(group string) []req {
	body := `{"logGroupName":"` + group + `","logStreamName":"` + logStream + `","logEvents":[{"timestamp":1,"message":"m"}]}`
	return []req{
		{action: "logs:CreateLogStream", resource: logStreamARN(group), call: &stackCall{logsService, "CreateLogStream", body}},
		{action: "logs:PutLogEvents", resource: logStreamARN(group), call: &stackCall{logsService, "PutLogEvents", body}},
	}
}

// listStreams is the ListStreams call on table: AWS authorises it on "*"
// only (it has no resource type), so only a statement granting it on "*"
// allows it.
func listStreams(table string) req {
	return req{action: "dynamodb:ListStreams", resource: "*", call: &stackCall{streamsService, "ListStreams", `{"TableName":"` + table + `"}`}}
}

// readStream are the calls that read the table's stream: the stack's
// DynamoDB Streams names their resource.
func readStream() []req {
	return []req{
		{action: "dynamodb:DescribeStream", resource: streamARN, call: &stackCall{streamsService, "DescribeStream", `{"StreamArn":"` + streamARN + `"}`}},
		{action: "dynamodb:GetShardIterator", resource: streamARN, call: &stackCall{streamsService, "GetShardIterator",
			`{"StreamArn":"` + streamARN + `","ShardId":"shardId-1","ShardIteratorType":"TRIM_HORIZON"}`}},
	}
}

// component is a principal with its policies and the requests it makes
// and must not make.
type component struct {
	name            string
	identity        []string
	boundary        string
	principal       string
	allowed, denied []req
}

// docs are policy documents in JSON.
func docs(ds ...provision.PolicyDocument) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.JSON()
	}
	return out
}

func claimSpec(name string) provision.Spec {
	return provision.Spec{Name: name, ClaimCheck: provision.ClaimCheckSpec{Enabled: true, BucketName: claimBucket, KMSKeyARN: claimKey}}.WithDefaults()
}

func resources(s provision.Spec) provision.Resources {
	a := provision.Account{Partition: "aws", Region: region, ID: account}
	n := provision.NamesFor(s.Name)
	r := provision.Resources{TableARN: tableARN, QueueARN: queueARN, TargetARN: s.TargetARN(a),
		RelayLogs: a.LogGroupARN(n.RelayLogGroup), ReconLogs: a.LogGroupARN(n.ReconcilerLogGroup), Reconciler: reconcilerFn}
	if s.ClaimCheck.Enabled {
		r.ClaimBucketARN, r.ClaimKMSKeyARN = a.ClaimBucketARN(claimBucket), s.ClaimCheck.KMSKeyARN
	}
	return r
}

const claimObject = "arn:aws:s3:::orders-claims/outbox/2026/12/04/01J0000000000000000000000"

// pipelineComponents are the provider's roles with the requests of the
// relay, the reconciler and the schedule.
func pipelineComponents(t *testing.T) []component {
	t.Helper()
	eb := provision.Spec{Name: "orders"}.WithDefaults()
	sns := provision.Spec{Name: "orders", PublishedAction: config.ActionDelete,
		Target: provision.TargetSpec{Type: config.TargetSNS, TopicARN: topicARN}}.WithDefaults()
	claims := claimSpec("orders")
	a := provision.Account{Partition: "aws", Region: region, ID: account}
	// Lambda reads the stream for the mapping with the relay's role:
	// ListStreams (granted on "*", as AWS's AWSLambdaDynamoDBExecutionRole
	// grants it) and the stream's own reads.
	common := append(append(writeLogs(relayLogs), readStream()...), listStreams("orders-outbox"))
	return []component{
		{name: "relay (EventBridge, mark)", identity: docs(provision.RelayPolicy(eb, resources(eb))), principal: relaySession,
			allowed: append(common,
				req{action: "dynamodb:UpdateItem", resource: tableARN}, req{action: "dynamodb:BatchGetItem", resource: tableARN},
				req{action: "events:PutEvents", resource: busARN}, req{action: "sqs:SendMessage", resource: queueARN}),
			denied: []req{{action: "dynamodb:DeleteItem", resource: tableARN}, {action: "sns:Publish", resource: topicARN},
				{action: "logs:CreateLogStream", resource: logStreamARN(reconLogs)}, {action: "dynamodb:DeleteTable", resource: tableARN},
				{action: "s3:PutObjectTagging", resource: claimObject}}},
		{name: "relay (SNS, delete)", identity: docs(provision.RelayPolicy(sns, resources(sns))), principal: relaySession,
			allowed: append(common, req{action: "dynamodb:DeleteItem", resource: tableARN}, req{action: "dynamodb:BatchWriteItem", resource: tableARN},
				req{action: "sns:Publish", resource: topicARN}),
			denied: []req{{action: "events:PutEvents", resource: busARN}, {action: "sns:Publish", resource: topicARN + "-other"}}},
		{name: "relay (claim check)", identity: docs(provision.RelayPolicy(claims, resources(claims))), principal: relaySession,
			allowed: []req{{action: "s3:GetObject", resource: claimObject}, {action: "s3:PutObjectTagging", resource: claimObject}, {action: "kms:Decrypt", resource: claimKey}},
			denied: []req{{action: "s3:GetObject", resource: "arn:aws:s3:::orders-claims/other/x"}, {action: "s3:PutObjectTagging", resource: "arn:aws:s3:::orders-claims/other/x"},
				{action: "s3:DeleteObject", resource: claimObject}, {action: "kms:GenerateDataKey", resource: claimKey}, {action: "kms:Decrypt", resource: claimKey + "0"}}},
		{name: "reconciler (claim check)", identity: docs(provision.ReconcilerPolicy(claims, resources(claims))),
			principal: "arn:aws:sts::123456789012:assumed-role/orders-reconciler/s",
			allowed: append(writeLogs(reconLogs),
				req{action: "dynamodb:Query", resource: tableARN + "/index/" + claims.OutboxTable().PendingIndexName},
				req{action: "dynamodb:UpdateItem", resource: tableARN}, req{action: "events:PutEvents", resource: busARN},
				req{action: "s3:ListBucket", resource: "arn:aws:s3:::orders-claims", context: map[string]string{"s3:prefix": "outbox/2026/"}},
				req{action: "s3:DeleteObject", resource: claimObject}, req{action: "s3:GetObject", resource: claimObject},
				req{action: "kms:Decrypt", resource: claimKey}, req{action: "dynamodb:GetItem", resource: tableARN},
				req{action: "lambda:InvokeFunction", resource: reconcilerFn}),
			denied: []req{{action: "s3:ListBucket", resource: "arn:aws:s3:::orders-claims", context: map[string]string{"s3:prefix": "other/"}},
				{action: "s3:ListBucket", resource: "arn:aws:s3:::orders-claims"},
				{action: "dynamodb:Scan", resource: tableARN}, {action: "sqs:SendMessage", resource: queueARN},
				{action: "lambda:InvokeFunction", resource: reconcilerFn + "-other"}}},
		{name: "schedule", identity: docs(provision.SchedulerPolicy(reconcilerFn)),
			principal: "arn:aws:sts::123456789012:assumed-role/orders-schedule/s",
			allowed:   []req{{action: "lambda:InvokeFunction", resource: reconcilerFn}},
			denied:    []req{{action: "lambda:InvokeFunction", resource: reconcilerFn + "-other"}}},
		{name: "claim writer", identity: docs(*provision.ClaimWriterPolicy(claims, a)),
			principal: "arn:aws:sts::123456789012:assumed-role/orders-app/s",
			allowed:   []req{{action: "s3:PutObject", resource: claimObject}, {action: "kms:GenerateDataKey", resource: claimKey}},
			denied:    []req{{action: "s3:DeleteObject", resource: claimObject}, {action: "kms:Decrypt", resource: claimKey + "0"}}},
		{name: "claim consumer", identity: docs(*provision.ClaimConsumerPolicy(claims, a)), principal: consumerRole,
			allowed: []req{{action: "s3:GetObject", resource: claimObject}, {action: "kms:Decrypt", resource: claimKey}},
			denied:  []req{{action: "s3:PutObject", resource: claimObject}, {action: "kms:GenerateDataKey", resource: claimKey}}},
	}
}

// subscriptionComponents are the consumer policies a subscription outputs.
func subscriptionComponents() []component {
	aliasKey := "arn:aws:kms:eu-west-1:123456789012:alias/billing"
	otherKey := "arn:aws:kms:eu-west-1:123456789012:key/ffffffff-12ab-34cd-56ef-1234567890ab"
	aliases := func(a ...string) map[string][]string { return map[string][]string{"kms:ResourceAliases": a} }
	queue := []req{{action: "sqs:ReceiveMessage", resource: subQueueARN}, {action: "sqs:DeleteMessage", resource: subQueueARN},
		{action: "dynamodb:PutItem", resource: inboxARN}, {action: "dynamodb:UpdateItem", resource: inboxARN}}
	return []component{
		{name: "consumer (queue key by alias ARN)", principal: consumerRole,
			identity: docs(subscription.ConsumerPolicy(subQueueARN, aliasKey, inboxARN, "")),
			allowed: append(queue, req{action: "kms:Decrypt", resource: claimKey, sets: aliases("alias/billing")},
				req{action: "kms:Decrypt", resource: claimKey, sets: aliases("alias/other", "alias/billing")}),
			denied: []req{{action: "kms:Decrypt", resource: claimKey, sets: aliases("alias/other")},
				{action: "kms:Decrypt", resource: claimKey, sets: aliases()},
				{action: "kms:Decrypt", resource: claimKey},
				{action: "kms:GenerateDataKey", resource: claimKey, sets: aliases("alias/billing")},
				{action: "sqs:SendMessage", resource: subQueueARN}, {action: "dynamodb:DeleteItem", resource: inboxARN}}},
		{name: "consumer (queue key by alias, inbox key)", principal: consumerRole,
			identity: docs(subscription.ConsumerPolicy(subQueueARN, "alias/billing", inboxARN, claimKey)),
			allowed: []req{{action: "kms:Decrypt", resource: otherKey, sets: aliases("alias/billing")},
				{action: "kms:GenerateDataKey", resource: claimKey}},
			denied: []req{{action: "kms:Decrypt", resource: otherKey, sets: aliases("alias/billing-old")},
				{action: "kms:GenerateDataKey", resource: otherKey}}},
		{name: "consumer (queue key by id)", principal: consumerRole,
			identity: docs(subscription.ConsumerPolicy(subQueueARN, "1234abcd-12ab-34cd-56ef-1234567890ab", inboxARN, "")),
			allowed:  []req{{action: "kms:Decrypt", resource: claimKey}},
			denied:   []req{{action: "kms:Decrypt", resource: otherKey}}},
	}
}

// resourceComponent is a resource-based policy with the requests it must
// allow and refuse.
type resourceComponent struct {
	name, policy, principal string
	allowed, denied         []req
}

func resourceComponents() []resourceComponent {
	sourced := func(action, resource, arn, acct string) req {
		ctx := map[string]string{}
		if arn != "" {
			ctx["aws:SourceArn"] = arn
		}
		if acct != "" {
			ctx["aws:SourceAccount"] = acct
		}
		return req{action: action, resource: resource, context: ctx}
	}
	return []resourceComponent{
		{name: "subscription queue policy (EventBridge)", policy: subscription.QueuePolicy(subQueueARN, ruleARN).JSON(), principal: "events.amazonaws.com",
			allowed: []req{sourced("sqs:SendMessage", subQueueARN, ruleARN, account)},
			denied: []req{sourced("sqs:SendMessage", subQueueARN, ruleARN+"-other", account), sourced("sqs:SendMessage", subQueueARN, "", ""),
				sourced("sqs:DeleteMessage", subQueueARN, ruleARN, account)}},
		{name: "subscription queue policy (SNS)", policy: subscription.QueuePolicy(subQueueARN, topicARN).JSON(), principal: "sns.amazonaws.com",
			allowed: []req{sourced("sqs:SendMessage", subQueueARN, topicARN, account)},
			denied:  []req{sourced("sqs:SendMessage", subQueueARN, topicARN+"-other", account)}},
		{name: "trust policy (Lambda)", policy: provision.TrustPolicy("lambda.amazonaws.com", "").JSON(), principal: "lambda.amazonaws.com",
			allowed: []req{sourced("sts:AssumeRole", relayRole, "", account)},
			denied:  []req{sourced("sts:TagSession", relayRole, "", account)}},
		{name: "trust policy (Scheduler)", policy: provision.TrustPolicy("scheduler.amazonaws.com", account).JSON(), principal: "scheduler.amazonaws.com",
			allowed: []req{sourced("sts:AssumeRole", relayRole, "", account)},
			denied:  []req{sourced("sts:AssumeRole", relayRole, "", otherAccount), sourced("sts:AssumeRole", relayRole, "", "")}},
	}
}

// exampleComponents are the roles of the documented examples
// (examples/consumer-lambda): the subscription's consumer policy, the
// handler's own statement and the AWS managed AWSLambdaBasicExecutionRole
// as the stack knows it; and the relay's policy under a permissions
// boundary that allows only its log writes.
func exampleComponents(t *testing.T) []component {
	t.Helper()
	basic, ok := iam.ManagedPolicyDocument("AWSLambdaBasicExecutionRole")
	if !ok {
		t.Fatal("the stack does not know AWSLambdaBasicExecutionRole")
	}
	const counts = "arn:aws:dynamodb:eu-west-1:123456789012:table/counts"
	handler := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:UpdateItem","Resource":"` + counts + `"}]}`
	eb := provision.Spec{Name: "orders"}.WithDefaults()
	logsOnly := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}`
	return []component{
		{name: "consumer-lambda example", principal: "arn:aws:sts::123456789012:assumed-role/payments-consumer/payments-consumer",
			identity: append(docs(subscription.ConsumerPolicy(subQueueARN, "", inboxARN, "")), handler, basic),
			allowed: append(writeLogs("/aws/lambda/payments-consumer"), req{action: "dynamodb:UpdateItem", resource: counts},
				req{action: "sqs:ReceiveMessage", resource: subQueueARN}, req{action: "dynamodb:PutItem", resource: inboxARN}),
			denied: []req{{action: "dynamodb:PutItem", resource: counts}, {action: "dynamodb:UpdateItem", resource: tableARN}}},
		{name: "relay under a logs-only boundary", principal: relaySession, boundary: logsOnly,
			identity: docs(provision.RelayPolicy(eb, resources(eb))),
			allowed:  writeLogs(relayLogs),
			denied:   []req{{action: "dynamodb:UpdateItem", resource: tableARN}, {action: "events:PutEvents", resource: busARN}}},
	}
}

package provision

import (
	"slices"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// PolicyDocument is an IAM policy document.
type PolicyDocument = awsops.PolicyDocument

// Statement is one statement of a PolicyDocument.
type Statement = awsops.Statement

const policyVersion = awsops.PolicyVersion

func allow(sid string, actions []string, resources ...string) Statement {
	return Statement{Sid: sid, Effect: "Allow", Action: actions, Resource: resources}
}

// Resources are the ARNs that the policies grant access to.
type Resources struct {
	// Account is the pipeline's partition, account and region.
	Account   Account
	TableARN  string
	QueueARN  string
	TargetARN string
	// RelayLogs and ReconLogs cover the streams of the functions' log groups.
	RelayLogs string
	ReconLogs string
	// Reconciler is the reconciler function, which invokes itself to
	// start workers.
	Reconciler string
	// ClaimBucketARN is the claim-check bucket; empty without one.
	ClaimBucketARN string
	// ClaimKMSKeyARN encrypts its objects; empty for SSE-S3.
	ClaimKMSKeyARN string
	// QueueKMSKey encrypts the dead-letter queue (its KmsMasterKeyId: a key
	// ARN, id, alias name or alias ARN); empty with SQS managed encryption.
	QueueKMSKey string
}

func (s Spec) resources(a Account, tableARN, queueARN string) Resources {
	n := NamesFor(s.Name)
	return Resources{
		Account:    a,
		TableARN:   tableARN,
		QueueARN:   queueARN,
		TargetARN:  s.TargetARN(a),
		RelayLogs:  a.LogGroupARN(n.RelayLogGroup),
		ReconLogs:  a.LogGroupARN(n.ReconcilerLogGroup),
		Reconciler: a.arn("lambda", "function:"+n.ReconcilerFunction),
		// Claim-check bucket: see claimbucket.go.
		ClaimBucketARN: s.claimBucketARN(a),
		ClaimKMSKeyARN: s.ClaimCheck.KMSKeyARN,
		QueueKMSKey:    s.DeadLetterQueue.KMSMasterKeyID,
	}
}

func publishStatement(s Spec, r Resources) Statement {
	p := s.Target.Permission()
	return allow(p.Sid, p.Actions, r.TargetARN)
}

// RelayPolicy is the inline policy of the relay's role: read the stream,
// read its batch's items (the status check before publishing), settle
// published items, publish, send failures to the dead-letter queue and
// write its logs. Items that cannot be published are marked failed with
// UpdateItem in both published actions.
func RelayPolicy(s Spec, r Resources) PolicyDocument {
	items := []string{"dynamodb:BatchGetItem", "dynamodb:UpdateItem"}
	if s.PublishedAction == config.ActionDelete {
		items = []string{"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem"}
	}
	return PolicyDocument{Version: policyVersion, Statement: slices.Concat([]Statement{
		allow("ReadStream", []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}, StreamsARN(r.TableARN)),
		// ListStreams has no resource type: AWS grants it on "*", in
		// AWSLambdaDynamoDBExecutionRole.
		allow("ListStreams", []string{"dynamodb:ListStreams"}, "*"),
		allow("SettleOutboxItems", items, r.TableARN),
		publishStatement(s, r),
		allow("SendToDeadLetterQueue", []string{"sqs:SendMessage"}, r.QueueARN),
	}, deadLetterKeyStatements(r), []Statement{
		allow("WriteLogs", []string{"logs:CreateLogStream", "logs:PutLogEvents"}, r.RelayLogs),
	}, s.WithDefaults().Controls.controlStatements(r.Account), relayClaimStatements(r))}
}

// deadLetterKeyStatements let the relay send to a dead-letter queue
// encrypted with a customer managed key: Lambda sends the failed batches'
// metadata with the execution role, and SQS asks KMS for a data key
// (kms:GenerateDataKey) and checks it (kms:Decrypt) on the sender's
// behalf ("Key management", Amazon SQS developer guide).
func deadLetterKeyStatements(r Resources) []Statement {
	if r.QueueKMSKey == "" {
		return nil
	}
	return []Statement{awsops.KMSKeyStatement("UseDeadLetterQueueKey", []string{"kms:Decrypt", "kms:GenerateDataKey"}, r.QueueKMSKey, r.Account.arn("kms", ""))}
}

// ReconcilerPolicy is the inline policy of the reconciler's role: query the
// pending index, settle items (in ordered mode, read the cursors too),
// publish and write its logs.
func ReconcilerPolicy(s Spec, r Resources) PolicyDocument {
	find := allow("QueryPendingIndex", []string{"dynamodb:Query"}, IndexARN(r.TableARN, s.OutboxTable().PendingIndexName))
	if s.Table.PendingIndexDisabled {
		// Without the index, the table holds only undelivered items: the
		// reconciler scans it, in segments sized from DescribeTable.
		find = allow("ScanOutboxTable", []string{"dynamodb:DescribeTable", "dynamodb:Scan"}, r.TableARN)
	}
	settle := []string{"dynamodb:UpdateItem"}
	if s.PublishedAction == config.ActionDelete {
		// Published items are deleted, 25 a call.
		settle = append([]string{"dynamodb:BatchWriteItem"}, settle...)
	}
	if s.Ordered {
		// The cursors of ordered mode, and the events registered on them;
		// the Scan for the FAILED events of a key before its cursor is
		// started (FAILED items are not in the pending index).
		settle = append([]string{"dynamodb:BatchGetItem"}, settle...)
		if !s.Table.PendingIndexDisabled {
			settle = append(settle, "dynamodb:Scan")
		}
	}
	return PolicyDocument{Version: policyVersion, Statement: slices.Concat([]Statement{
		find,
		allow("SettleOutboxItems", settle, r.TableARN),
		publishStatement(s, r),
		allow("WriteLogs", []string{"logs:CreateLogStream", "logs:PutLogEvents"}, r.ReconLogs),
	}, s.WithDefaults().Controls.controlStatements(r.Account), reconcilerClaimStatements(r), workerStatements(s, r), regionStatements(s, r))}
}

// regionStatements let the reconciler of a multi-Region pipeline read and
// write the Regions' heartbeat and takeover claim items (outbox/region.go):
// it puts its heartbeat, reads its peers' and the claims, puts a claim on
// a silent Region and deletes it to hand the Region back.
func regionStatements(s Spec, r Resources) []Statement {
	if len(s.MultiRegion.Regions) == 0 {
		return nil
	}
	return []Statement{allow("RegionsHeartbeatsAndTakeovers", []string{"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem"}, r.TableARN)}
}

// workerStatements let the reconciler start workers, invoking its own
// function and no other, when more than one run may sweep at once; its
// lease items are written with the UpdateItem it settles items with.
func workerStatements(s Spec, r Resources) []Statement {
	if s.WithDefaults().Reconciler.MaxWorkers <= 1 {
		return nil
	}
	return []Statement{allow("StartReconcileWorkers", []string{"lambda:InvokeFunction"}, r.Reconciler)}
}

// SchedulerPolicy is the inline policy of the schedule's role: invoke the
// reconciler and nothing else.
func SchedulerPolicy(reconcilerARN string) PolicyDocument {
	return PolicyDocument{Version: policyVersion, Statement: []Statement{
		allow("InvokeReconciler", []string{"lambda:InvokeFunction"}, reconcilerARN),
	}}
}

// TrustPolicy lets a service assume a role, from the given account only.
func TrustPolicy(service, accountID string) PolicyDocument {
	st := Statement{
		Effect:    "Allow",
		Principal: map[string]string{"Service": service},
		Action:    []string{"sts:AssumeRole"},
	}
	if accountID != "" {
		st.Condition = map[string]map[string]string{"StringEquals": {"aws:SourceAccount": accountID}}
	}
	return PolicyDocument{Version: policyVersion, Statement: []Statement{st}}
}

// PolicyResources are the ARNs the roles' policies of s grant access to,
// in account a, with the table and the dead-letter queue given.
func (s Spec) PolicyResources(a Account, tableARN, queueARN string) Resources {
	return s.resources(a, tableARN, queueARN)
}

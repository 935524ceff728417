package differential_test

import "slices"

// Documentation cited by the decisions.
const (
	ddbAPI     = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/"
	ddbGuide   = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
	eventsAPI  = "https://docs.aws.amazon.com/eventbridge/latest/APIReference/"
	eventsDoc  = "https://docs.aws.amazon.com/eventbridge/latest/userguide/"
	logsAPI    = "https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/"
	schedAPI   = "https://docs.aws.amazon.com/scheduler/latest/APIReference/"
	iamAPI     = "https://docs.aws.amazon.com/IAM/latest/APIReference/"
	snsAPI     = "https://docs.aws.amazon.com/sns/latest/api/"
	sqsAPI     = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/"
	sqsGuide   = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/"
	tableDescs = "CreateTable/TableDescription."
)

// paths lists each of the given field paths under each step.
func paths(steps []string, fields ...string) []string {
	var out []string
	for _, s := range steps {
		for _, f := range fields {
			out = append(out, s+f)
		}
	}
	return out
}

var tableSteps = []string{"CreateTable/TableDescription.", "DescribeTable/Table.", "DeleteTable/TableDescription."}

// differences decides every difference between the local stack and moto.
// docs/localaws-differences.md is rendered from it
// (TestDifferentialTableDoc).
var differences = append([]decision{
	// DynamoDB tables.
	{Scenario: "dynamodb/tables", Paths: paths(tableSteps, "GlobalSecondaryIndexes[0].IndexArn", "GlobalSecondaryIndexes[0].IndexSizeBytes", "GlobalSecondaryIndexes[0].ItemCount"),
		Verdict: motoWrong, Ours: "describes each GSI's IndexArn, IndexSizeBytes and ItemCount", Moto: "omits them",
		Why: "GlobalSecondaryIndexDescription has IndexArn, IndexSizeBytes and ItemCount; DescribeTable returns them.", Source: ddbAPI + "API_GlobalSecondaryIndexDescription.html"},
	{Scenario: "dynamodb/tables", Paths: paths(tableSteps, "GlobalSecondaryIndexes[0].ProvisionedThroughput.NumberOfDecreasesToday"),
		Verdict: unspecified, Ours: "gives an on-demand GSI ProvisionedThroughput with zero capacities and NumberOfDecreasesToday 0", Moto: "gives zero capacities without NumberOfDecreasesToday",
		Why: "For on-demand capacity the throughput description carries no information; NumberOfDecreasesToday 0 and its absence read the same.", Source: ddbAPI + "API_ProvisionedThroughputDescription.html"},
	{Scenario: "dynamodb/tables", Paths: paths(tableSteps, "TableId"),
		Verdict: motoWrong, Ours: "returns a TableId", Moto: "omits TableId",
		Why: "TableDescription.TableId is the table's unique identifier and is returned for every table.", Source: ddbAPI + "API_TableDescription.html"},
	{Scenario: "dynamodb/tables", Paths: paths(tableSteps, "BillingModeSummary.LastUpdateToPayPerRequestDateTime"),
		Verdict: motoWrong, Ours: "returns the time the table became on-demand", Moto: "omits it",
		Why: "BillingModeSummary.LastUpdateToPayPerRequestDateTime is the time the table was last set to PAY_PER_REQUEST, its creation for a table created on demand.", Source: ddbAPI + "API_BillingModeSummary.html"},
	{Scenario: "dynamodb/tables", Paths: []string{"CreateTable/TableDescription.TableStatus"},
		Verdict: motoWrong, Ours: "CREATING", Moto: "ACTIVE",
		Why: "CreateTable is asynchronous: it returns at once with TableStatus CREATING; DescribeTable later shows ACTIVE.", Source: ddbAPI + "API_CreateTable.html"},
	{Scenario: "dynamodb/tables", Paths: []string{"DeleteTable/TableDescription.TableStatus"},
		Verdict: motoWrong, Ours: "DELETING", Moto: "ACTIVE",
		Why: "DeleteTable returns with the table in the DELETING state.", Source: ddbAPI + "API_DeleteTable.html"},
	{Scenario: "dynamodb/tables", Paths: []string{"DeleteTable/TableDescription.TableSizeBytes"},
		Verdict: unspecified, Ours: "the current size of the table's item", Moto: "0",
		Why: "DynamoDB refreshes TableSizeBytes about every six hours, so a recent write may or may not be counted.", Source: ddbAPI + "API_TableDescription.html"},
	{Scenario: "dynamodb/tables", Paths: []string{"PutItem with a GSI key of the wrong type*"},
		Verdict: motoWrong, Ours: "ValidationException", Moto: "writes the item",
		Why: "An index key attribute must have the type the index's key schema declares; a write with another type fails with a ValidationException.", Source: ddbGuide + "GSI.html"},
	// DynamoDB data.
	{Scenario: "dynamodb/transactions", Paths: []string{"TransactWriteItems committed"},
		Verdict: motoWrong, Ours: "ConsumedCapacity of 6 write units for a put, a condition check and an update", Moto: "no ConsumedCapacity though ReturnConsumedCapacity is TOTAL",
		Why: "With ReturnConsumedCapacity TOTAL the response has the capacity consumed; each transactional write action of up to 1 KB takes 2 write units.", Source: ddbGuide + "read-write-operations.html"},
	{Scenario: "dynamodb/transactions", Paths: []string{"Query the partition page 1/ConsumedCapacity.CapacityUnits", "GetItem with consumed capacity/ConsumedCapacity.CapacityUnits"},
		Verdict: motoWrong, Ours: "0.5 read units for an eventually consistent Query of under 4 KB, 1 for a strongly consistent GetItem", Moto: "1 and 0.5: the other way round",
		Why: "A strongly consistent read of up to 4 KB takes one read unit, an eventually consistent one half a unit; Query sums the items read, GetItem's ConsistentRead makes it strong.", Source: ddbGuide + "read-write-operations.html"},
	{Scenario: "dynamodb/transactions", Paths: []string{"*/ConsumedCapacity.ReadCapacityUnits", "*/ConsumedCapacity.WriteCapacityUnits"},
		Verdict: unspecified, Ours: "ReadCapacityUnits or WriteCapacityUnits beside CapacityUnits", Moto: "CapacityUnits only",
		Why: "ConsumedCapacity documents CapacityUnits, ReadCapacityUnits and WriteCapacityUnits, but not which of them a TOTAL answer fills; a client reads CapacityUnits.", Source: ddbAPI + "API_ConsumedCapacity.html"},
	{Scenario: "dynamodb/limit-filter", Paths: []string{"Query page 4/LastEvaluatedKey", "Query page 5"},
		Verdict: unspecified, Ours: "returns a LastEvaluatedKey when Limit ends on the last item, so the client reads one more, empty page", Moto: "returns no LastEvaluatedKey on the last page",
		Why: "A non-empty LastEvaluatedKey does not mean more data; only an empty one ends the result set. DynamoDB itself returns the key when Limit is reached.", Source: ddbGuide + "Query.Pagination.html"},
	{Scenario: "dynamodb/conditional", Paths: []string{"UpdateItem */ConsumedCapacity", "UpdateItem SET an unchanged value"},
		Verdict: motoWrong, Ours: "no ConsumedCapacity", Moto: "ConsumedCapacity though none was asked for",
		Why: "ReturnConsumedCapacity defaults to NONE: no ConsumedCapacity details are included in the response.", Source: ddbAPI + "API_UpdateItem.html"},
	{Scenario: "dynamodb/batch", Paths: []string{"BatchWriteItem 25 puts", "BatchWriteItem deletes", "BatchGetItem with missing keys/ConsumedCapacity"},
		Verdict: motoWrong, Ours: "no ConsumedCapacity", Moto: "ConsumedCapacity though none was asked for",
		Why: "ReturnConsumedCapacity defaults to NONE: no ConsumedCapacity details are included in the response.", Source: ddbAPI + "API_BatchWriteItem.html"},
	{Scenario: "dynamodb/batch", Paths: []string{"BatchWriteItem duplicate keys/*"}, Intermittent: true,
		Verdict: motoWrong, Ours: "ValidationException", Moto: "accepts two puts of one key on some runs, rejects them on others",
		Why: "BatchWriteItem rejects a request with two operations on the same item with a ValidationException.", Source: ddbAPI + "API_BatchWriteItem.html"},
	{Scenario: "dynamodb/batch", Paths: []string{"BatchWriteItem 26 puts/*", "BatchGetItem with missing keys/Responses.diff-batch[5]", "Scan page 1/Count", "Scan page 1/ScannedCount"},
		Verdict: motoWrong, Ours: "ValidationException for 26 requests", Moto: "writes all 26 (and the later reads find the 26th item)",
		Why: "BatchWriteItem takes at most 25 put or delete requests.", Source: ddbAPI + "API_BatchWriteItem.html"},
	{Scenario: "dynamodb/batch", Paths: []string{"Scan page 1/Items"},
		Verdict: motoWrong, Ours: "only Count and ScannedCount", Moto: "the items as well",
		Why: "Select COUNT returns the number of matching items rather than the items themselves.", Source: ddbAPI + "API_Scan.html"},
	// DynamoDB Streams.
	{Scenario: "dynamodbstreams/records", Paths: []string{"GetRecords */Records[*].Dynamodb.SizeBytes"},
		Verdict: unspecified, Ours: "the size of the record's keys and images", Moto: "a larger size",
		Why: "StreamRecord.SizeBytes is \"the size of the stream record, in bytes\"; how it is computed is not documented.", Source: ddbAPI + "API_streams_StreamRecord.html"},
	{Scenario: "dynamodbstreams/records", Paths: []string{"GetRecords */Records[*].EventVersion"},
		Verdict: unspecified, Ours: "1.1", Moto: "1.0",
		Why: "Record.eventVersion is the version of the record format; clients must not assume it keeps a value. Lambda's examples show 1.1, the API reference's 1.0.", Source: ddbAPI + "API_streams_Record.html"},
	{Scenario: "dynamodbstreams/records", Paths: []string{"GetRecords TRIM_HORIZON/Records[4]", "GetRecords AT_SEQUENCE_NUMBER of the second/Records[3]", "GetRecords AFTER_SEQUENCE_NUMBER of the second/Records[2]"},
		Verdict: motoWrong, Ours: "no record for a PutItem that changes nothing", Moto: "a MODIFY record with equal old and new images",
		Why: "A PutItem or UpdateItem that does not change any data in an item writes no stream record.", Source: ddbGuide + "Streams.html"},
	{Scenario: "dynamodbstreams/records", Paths: []string{"GetRecords with a bad iterator/*", "GetShardIterator missing shard/*"},
		Verdict: motoWrong, Ours: "ValidationException for a malformed iterator, ResourceNotFoundException for a missing shard", Moto: "HTTP 500 with no error code",
		Why: "GetRecords and GetShardIterator document client errors (ValidationException, ResourceNotFoundException, ExpiredIteratorException, TrimmedDataAccessException); an unmodelled 500 is none of them.", Source: ddbAPI + "API_streams_GetShardIterator.html"},
	// SQS.
	{Scenario: "sqs/queues", Paths: []string{"GetQueueAttributes/Attributes.CreatedTimestamp", "GetQueueAttributes/Attributes.LastModifiedTimestamp"},
		Verdict: motoWrong, Ours: "whole seconds", Moto: "seconds with a fraction",
		Why: "CreatedTimestamp and LastModifiedTimestamp are epoch times in seconds (integers).", Source: sqsAPI + "API_GetQueueAttributes.html"},
	{Scenario: "sqs/queues", Paths: []string{"GetQueueAttributes/Attributes.MaximumMessageSize"},
		Verdict: unspecified, Ours: "262144 (256 KiB)", Moto: "1048576 (1 MiB)",
		Why: "SQS raised the largest allowed message to 1 MiB in 2025; references disagree on the default of a new queue (provider documentation still gives 262,144). Clients read the attribute.", Source: sqsAPI + "API_SetQueueAttributes.html"},
	{Scenario: "sqs/queues", Paths: []string{"dead-letter queue/Messages[*].Attributes.ApproximateReceiveCount"},
		Verdict: unspecified, Ours: "counts receives from the dead-letter queue afresh (1)", Moto: "carries the source queue's count on (2)",
		Why: "The redrive documentation says neither that the receive count is reset nor that it carries over when a message moves to a dead-letter queue.", Source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html"},
	// SNS.
	{Scenario: "sns/topics", Paths: []string{"GetTopicAttributes/Attributes.EffectiveDeliveryPolicy.*", "GetTopicAttributes/Attributes.DeliveryPolicy"},
		Verdict: motoWrong, Ours: `an EffectiveDeliveryPolicy with the HTTP/S policy under "http"`, Moto: `an older shape without "http", and an empty DeliveryPolicy`,
		Why: `The delivery policy JSON nests the default retry policy under "http"; an unset DeliveryPolicy is not returned.`, Source: "https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html"},
	{Scenario: "sns/topics", Paths: []string{"GetTopicAttributes/Attributes.SignatureVersion"},
		Verdict: unspecified, Ours: `"1"`, Moto: "absent",
		Why: "SignatureVersion defaults to 1 (SHA1); whether the default is listed among the topic's attributes is not documented.", Source: snsAPI + "API_GetTopicAttributes.html"},
	{Scenario: "sns/topics", Paths: []string{"GetTopicAttributes/Attributes.SubscriptionsConfirmed"},
		Verdict: unspecified, Ours: "1 right after an SQS subscription in the account", Moto: "0",
		Why: "An SQS subscription in the topic's account is confirmed at once, but SNS updates the subscription counts of GetTopicAttributes with a delay.", Source: snsAPI + "API_GetTopicAttributes.html"},
	{Scenario: "sns/topics", Paths: []string{"GetSubscriptionAttributes/Attributes.SubscriptionPrincipal"},
		Verdict: unspecified, Ours: "the ARN of the principal that subscribed", Moto: "absent",
		Why: "SNS answers with SubscriptionPrincipal in practice, but the API reference's list of subscription attributes does not name it; no client here reads it.", Source: snsAPI + "API_GetSubscriptionAttributes.html"},
	// EventBridge.
	{Scenario: "events/buses", Paths: []string{"TestEventPattern */Result"},
		Verdict: motoWrong, Ours: "matches prefix, numeric, anything-but and exists patterns as documented", Moto: "false for every pattern with content filters",
		Why: "Content filters (prefix, numeric, anything-but, exists) match the event's fields as the pattern documentation describes; the matching events here match.", Source: eventsDoc + "eb-create-pattern-operators.html"},
	{Scenario: "events/buses", Paths: []string{"PutEvents to a missing bus/*"},
		Verdict: unspecified, Ours: "a per-entry ResourceNotFoundException (FailedEntryCount 1)", Moto: "fails the whole call with ResourceNotFoundException",
		Why: "The API reference lists no code for a missing bus, and AWS has answered such entries in more than one way (long accepted silently; per the service team corrected in 2024). Both answers tell the relay the event was not accepted, and it retries either (an environment fault).", Source: "https://github.com/aws/aws-sdk/issues/186"},
	{Scenario: "events/buses", Paths: []string{"PutEvents per-entry results/Entries[2].*", "PutEvents per-entry results/FailedEntryCount"},
		Verdict: motoWrong, Ours: "MalformedDetail for a JSON array as Detail", Moto: "accepts it",
		Why: "Detail must be a valid JSON object; an array is valid JSON but no object.", Source: eventsAPI + "API_PutEventsRequestEntry.html"},
	{Scenario: "events/buses", Paths: []string{"PutEvents per-entry results/Entries[6].*"},
		Verdict: motoWrong, Ours: "NotAuthorizedForSourceException for a source starting with aws.", Moto: "accepts it",
		Why: "Sources starting with aws. are reserved for AWS services; PutEvents answers such an entry with NotAuthorizedForSourceException.", Source: eventsAPI + "API_PutEventsResultEntry.html"},
	{Scenario: "events/buses", Paths: []string{"PutEvents per-entry results/Entries[7].*"},
		Verdict: unspecified, Ours: "InvalidArgument for a Resources entry that is not an ARN", Moto: "accepts it",
		Why: "Resources are \"identified by ARN\", but the API reference does not say PutEvents checks them; public reports show AWS accepting ARNs of resources that do not exist. The relay never sets Resources.", Source: eventsAPI + "API_PutEventsRequestEntry.html"},
	{Scenario: "events/buses", Paths: []string{"delivered to SQS/Messages[*].Body.account"},
		Verdict: motoWrong, Ours: "the envelope has account", Moto: "no account field",
		Why: "Every event's envelope has version, id, detail-type, source, account, time, region, resources and detail.", Source: eventsDoc + "eb-events-structure.html"},
	// IAM.
	{Scenario: "iam/roles", Paths: []string{"CreatePolicy/Policy.PermissionsBoundaryUsageCount"},
		Verdict: motoWrong, Ours: "0", Moto: "absent",
		Why: "A managed policy reports PermissionsBoundaryUsageCount, the number of entities it is the boundary of.", Source: iamAPI + "API_Policy.html"},
	{Scenario: "iam/roles", Paths: []string{"DeletePolicy used as a boundary", "DeletePolicy"},
		Verdict: motoWrong, Ours: "refuses to delete a managed policy that is a role's permissions boundary (DeleteConflict, 409), and deletes it once the boundary is removed", Moto: "deletes it at once, so the later DeletePolicy finds nothing (NoSuchEntity)",
		Why: "A managed policy must be detached from every entity before DeletePolicy; AWS answers DeleteConflict (\"Cannot delete a policy attached to entities\") while it is a permissions boundary, as users of cloud-nuke report (gruntwork-io/cloud-nuke#972).", Source: iamAPI + "API_DeletePolicy.html"},
	{Scenario: "iam/roles", Paths: []string{"CreateRole with a malformed trust policy/*"},
		Verdict: motoWrong, Ours: "MalformedPolicyDocument", Moto: "creates the role",
		Why: "CreateRole fails with MalformedPolicyDocument when the trust policy has a syntax error or no Statement.", Source: iamAPI + "API_CreateRole.html"},
	// Scheduler.
	{Scenario: "scheduler/schedules", Paths: []string{"CreateSchedule bad-rate-unit/*", "CreateSchedule bad-cron/*", "CreateSchedule five-field-cron/*"},
		Verdict: motoWrong, Ours: "ValidationException", Moto: "creates the schedule",
		Why: "rate() takes minute|minutes|hour|hours|day|days with a matching number; cron() takes six fields with hours 0-23.", Source: "https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html"},
	{Scenario: "scheduler/schedules", Paths: []string{"CreateSchedule missing-role/*"},
		Verdict: motoWrong, Ours: "ValidationException: the execution role must allow Scheduler to assume it", Moto: "creates the schedule",
		Why: "CreateSchedule checks that the target's execution role exists and trusts scheduler.amazonaws.com, and fails with a ValidationException otherwise.", Source: schedAPI + "API_CreateSchedule.html"},
	{Scenario: "scheduler/schedules", Paths: []string{"ListSchedules/*"},
		Verdict: motoWrong, Ours: "lists the three valid schedules", Moto: "lists the invalid ones too",
		Why: "Follows from the invalid schedules moto created (see the CreateSchedule decisions).", Source: "https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html"},
	{Scenario: "scheduler/schedules", Paths: []string{"GetSchedule/ActionAfterCompletion", "GetSchedule after update/ActionAfterCompletion"},
		Verdict: motoWrong, Ours: "NONE", Moto: "an empty string",
		Why: "ActionAfterCompletion is NONE or DELETE and defaults to NONE.", Source: schedAPI + "API_GetSchedule.html"},
	// CloudWatch Logs.
	{Scenario: "logs/groups", Paths: []string{"PutRetentionPolicy invalid days", "DescribeLogGroups/LogGroups[0].RetentionInDays"},
		Verdict: motoWrong, Ours: "InvalidParameterException for 15 days", Moto: "accepts 15 days",
		Why: "RetentionInDays takes one of 1, 3, 5, 7, 14, 30, 60, 90, … days; 15 is not one of them.", Source: logsAPI + "API_PutRetentionPolicy.html"},
	{Scenario: "logs/groups", Paths: []string{"DescribeLogGroups/LogGroups[0].LogGroupClass"},
		Verdict: motoWrong, Ours: "STANDARD", Moto: "an empty string",
		Why: "A log group's class is STANDARD unless created as INFREQUENT_ACCESS or DELIVERY.", Source: logsAPI + "API_LogGroup.html"},
	{Scenario: "logs/groups", Paths: []string{"FilterLogEvents */SearchedLogStreams"},
		Verdict: motoWrong, Ours: "no SearchedLogStreams", Moto: "lists the searched streams",
		Why: "searchedLogStreams is no longer supported and returns an empty list.", Source: logsAPI + "API_FilterLogEvents.html"},
	{Scenario: "logs/groups", Paths: []string{"DescribeLogStreams/LogStreams[0].StoredBytes"},
		Verdict: motoWrong, Ours: "0", Moto: "the bytes written",
		Why: "storedBytes of log streams is deprecated and reported as zero.", Source: logsAPI + "API_LogStream.html"},
	{Scenario: "logs/groups", Paths: []string{"DescribeLogStreams/LogStreams[0].UploadSequenceToken"},
		Verdict: unspecified, Ours: "no uploadSequenceToken", Moto: "a token",
		Why: "Sequence tokens are ignored by PutLogEvents; the token is an opaque value clients no longer use.", Source: logsAPI + "API_LogStream.html"},
	{Scenario: "logs/groups", Paths: []string{"FilterLogEvents json/Events[1]", "FilterLogEvents json/Events[2]"},
		Verdict: motoWrong, Ours: `only the event whose JSON has level ERROR, for { $.level = "ERROR" }`, Moto: "every event: the JSON pattern is not applied",
		Why: "A JSON filter pattern ({ $.field = value }) matches the JSON log events whose field has that value, and no other events.", Source: "https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html"},
	// CloudWatch alarms (moto spoken to in awsQuery, the local stack in rpcv2Cbor).
	{Scenario: "cloudwatch/alarms", Paths: []string{"PutMetricAlarm without a statistic"},
		Verdict: motoWrong, Ours: "InvalidParameterCombination", Moto: "creates the alarm",
		Why: "An alarm on a single metric needs Statistic or ExtendedStatistic (or Metrics for a math expression); without one there is nothing to compare with the threshold.", Source: "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html"},
	{Scenario: "cloudwatch/alarms", Paths: []string{"DescribeAlarms/MetricAlarms[0].StateValue"},
		Verdict: motoWrong, Ours: "INSUFFICIENT_DATA", Moto: "OK",
		Why: "A new alarm starts in INSUFFICIENT_DATA: it has just started and has no data to evaluate yet.", Source: "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Alarms.html"},
	{Scenario: "cloudwatch/alarms", Paths: []string{"DescribeAlarms/MetricAlarms[0].StateReasonData", "DescribeAlarms/MetricAlarms[0].StateTransitionedTimestamp"},
		Verdict: unspecified, Ours: "no StateReasonData; StateTransitionedTimestamp at creation", Moto: "StateReasonData {}; no StateTransitionedTimestamp",
		Why: "A new alarm has no evaluation data (an empty JSON object or none say the same) and has made no transition yet; the creation time and no value are both readings of the field.", Source: "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricAlarm.html"},
}, fifoDifferences()...)

// queueAttributeDecisions decides, for a scenario's GetQueueAttributes
// steps, the differences every queue shows (as in sqs/queues).
func queueAttributeDecisions(scenario string, steps ...string) []decision {
	return []decision{
		{Scenario: scenario, Paths: paths(steps, "/Attributes.CreatedTimestamp", "/Attributes.LastModifiedTimestamp"),
			Verdict: motoWrong, Ours: "whole seconds", Moto: "seconds with a fraction",
			Why: "CreatedTimestamp and LastModifiedTimestamp are epoch times in seconds (integers).", Source: sqsAPI + "API_GetQueueAttributes.html"},
		{Scenario: scenario, Paths: paths(steps, "/Attributes.MaximumMessageSize"),
			Verdict: unspecified, Ours: "262144 (256 KiB)", Moto: "1048576 (1 MiB)",
			Why: "SQS raised the largest allowed message to 1 MiB in 2025; references disagree on the default of a new queue. Clients read the attribute.", Source: sqsAPI + "API_SetQueueAttributes.html"},
	}
}

// fifoDifferences decides the differences of the FIFO scenarios.
func fifoDifferences() []decision {
	return slices.Concat(
		queueAttributeDecisions("sqs/fifo", "GetQueueAttributes diff-fifo.fifo"),
		sqsFIFODecisions,
		queueAttributeDecisions("sqs/fifo-redrive", "GetQueueAttributes diff-fifo-dlq.fifo", "GetQueueAttributes diff-fifo-src.fifo"),
		sqsFIFORedriveDecisions,
		queueAttributeDecisions("sns/fifo", "GetQueueAttributes diff-sns-target.fifo", "GetQueueAttributes diff-sns-body.fifo"),
		snsFIFODecisions,
	)
}

var sqsFIFODecisions = []decision{
	{Scenario: "sqs/fifo", Paths: []string{"CreateQueue .fifo name without FifoQueue/*"},
		Verdict: motoWrong, Ours: "InvalidParameterValue", Moto: "creates the queue",
		Why: "Without FifoQueue=true SQS creates a standard queue, whose name is alphanumeric characters, hyphens and underscores only; a .fifo name is a FIFO queue's and needs FifoQueue=true.", Source: sqsAPI + "API_CreateQueue.html"},
	{Scenario: "sqs/fifo", Paths: []string{"CreateQueue perMessageGroupId with queue scope/*"},
		Verdict: motoWrong, Ours: "InvalidAttributeValue", Moto: "creates the queue",
		Why: "FifoThroughputLimit perMessageGroupId is allowed only when DeduplicationScope is messageGroup.", Source: sqsAPI + "API_CreateQueue.html"},
	{Scenario: "sqs/fifo", Paths: []string{"CreateQueue ContentBasedDeduplication on a standard queue/*"},
		Verdict: motoWrong, Ours: "InvalidAttributeName", Moto: "creates the queue",
		Why: "ContentBasedDeduplication, DeduplicationScope and FifoThroughputLimit apply only to FIFO queues; a standard queue does not know them.", Source: sqsAPI + "API_CreateQueue.html"},
	{Scenario: "sqs/fifo", Paths: []string{"a duplicate has the original's MessageId"},
		Verdict: unspecified, Ours: "answers a duplicate send with the original message's MessageId", Moto: "a new MessageId (the message is still not delivered twice)",
		Why: "A send with a deduplication id of the last five minutes is accepted and not delivered again; which MessageId the answer carries is not documented.", Source: sqsGuide + "FIFO-key-terms.html"},
	{Scenario: "sqs/fifo", Paths: []string{"SendMessageBatch/Successful[*].SequenceNumber", "receive 10 while group a is in flight*/Attributes.SequenceNumber",
		"receive after a1 is deleted*/Attributes.SequenceNumber"},
		Verdict: motoWrong, Ours: "a SequenceNumber for every message sent to a FIFO queue, by SendMessageBatch too", Moto: "none for messages sent by SendMessageBatch",
		Why: "SendMessageBatchResultEntry has the SequenceNumber SQS assigns to each FIFO message, and ReceiveMessage returns it as the SequenceNumber system attribute.", Source: sqsAPI + "API_SendMessageBatchResultEntry.html"},
	{Scenario: "sqs/fifo", Paths: []string{"SendMessageBatch without MessageGroupId/*"},
		Verdict: unspecified, Ours: "fails the entry (MissingParameter in Failed)", Moto: "fails the whole request with MissingParameter",
		Why: "SendMessageBatch reports each message's result individually, but the API reference does not say whether a missing MessageGroupId fails its entry or the request; a client handles both.", Source: sqsAPI + "API_SendMessageBatch.html"},
	{Scenario: "sqs/fifo", Paths: []string{"SetQueueAttributes FifoQueue"},
		Verdict: motoWrong, Ours: "InvalidAttributeName", Moto: "accepts it",
		Why: "FifoQueue can be given only at queue creation; an existing queue's type cannot be changed.", Source: sqsAPI + "API_CreateQueue.html"},
	{Scenario: "sqs/fifo", Paths: []string{"SendMessage with a deduplication id to a standard queue"},
		Verdict: motoWrong, Ours: "InvalidParameterValue", Moto: "sends the message",
		Why: "MessageDeduplicationId applies only to FIFO queues; a standard queue refuses the parameter as not valid for its queue type.", Source: sqsAPI + "API_SendMessage.html"},
}

var sqsFIFORedriveDecisions = []decision{
	{Scenario: "sqs/fifo-redrive", Paths: []string{"CreateQueue FIFO with a standard dead-letter queue/*"},
		Verdict: unspecified, Ours: "InvalidParameterValue", Moto: "InvalidParameterCombination",
		Why: "Both refuse the redrive policy, as AWS does (a FIFO queue's dead-letter queue must be FIFO); the API reference does not name the error code.", Source: sqsGuide + "sqs-dead-letter-queues.html"},
	{Scenario: "sqs/fifo-redrive", Paths: []string{"CreateQueue standard with a FIFO dead-letter queue/*"},
		Verdict: motoWrong, Ours: "InvalidParameterValue", Moto: "creates the queue",
		Why: "A dead-letter queue must be of the source queue's type: a standard queue can only use a standard dead-letter queue.", Source: sqsGuide + "sqs-configure-dead-letter-queue.html"},
	{Scenario: "sqs/fifo-redrive", Paths: []string{"dead-letter queue*/Body", "dead-letter queue*/Attributes.MessageDeduplicationId"},
		Verdict: motoWrong, Ours: "g1, g2, g3: the group's order", Moto: "g3, g1, g2",
		Why: "A FIFO queue delivers a group's messages in the order sent; each message moves to the (FIFO) dead-letter queue when it would be received again, so the dead-letter queue receives them in that order.", Source: sqsGuide + "FIFO-queues-understanding-logic.html"},
}

// wrapped is the path of the notifications the body-filtered FIFO
// subscription receives.
const wrapped = "delivered to the FIFO queue filtering on the body*/Body."

var snsFIFODecisions = []decision{
	{Scenario: "sns/fifo", Paths: []string{"GetTopicAttributes/Attributes.EffectiveDeliveryPolicy.*", "GetTopicAttributes/Attributes.DeliveryPolicy"},
		Verdict: motoWrong, Ours: `an EffectiveDeliveryPolicy with the HTTP/S policy under "http"`, Moto: `an older shape without "http", and an empty DeliveryPolicy`,
		Why: `The delivery policy JSON nests the default retry policy under "http"; an unset DeliveryPolicy is not returned.`, Source: "https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html"},
	{Scenario: "sns/fifo", Paths: []string{"GetTopicAttributes/Attributes.SignatureVersion"},
		Verdict: unspecified, Ours: `"1"`, Moto: "absent",
		Why: "SignatureVersion defaults to 1 (SHA1); whether the default is listed among the topic's attributes is not documented.", Source: snsAPI + "API_GetTopicAttributes.html"},
	{Scenario: "sns/fifo", Paths: []string{"GetSubscriptionAttributes/Attributes.SubscriptionPrincipal"},
		Verdict: unspecified, Ours: "the ARN of the principal that subscribed", Moto: "absent",
		Why: "SNS answers with SubscriptionPrincipal in practice, but the API reference's list of subscription attributes does not name it; no client here reads it.", Source: snsAPI + "API_GetSubscriptionAttributes.html"},
	{Scenario: "sns/fifo", Paths: []string{"Publish without MessageGroupId/*"},
		Verdict: motoWrong, Ours: "InvalidParameter", Moto: "MissingParameter",
		Why: "Publish's errors are InvalidParameter (\"a request parameter does not comply with the associated constraints\"), InvalidParameterValue and others; MissingParameter is not one of them.", Source: snsAPI + "API_Publish.html"},
	{Scenario: "sns/fifo", Paths: []string{"Publish a1/SequenceNumber", "Publish a filtered out/SequenceNumber", "Publish a1 again/SequenceNumber", "Publish a2/SequenceNumber",
		"PublishBatch/Successful[*].SequenceNumber", "Publish by content/SequenceNumber", "Publish by content again/SequenceNumber"},
		Verdict: motoWrong, Ours: "a SequenceNumber in every Publish and PublishBatch result of a FIFO topic", Moto: "none",
		Why: "For FIFO topics Publish and PublishBatch return the SequenceNumber SNS assigns to each message.", Source: snsAPI + "API_PublishBatchResultEntry.html"},
	{Scenario: "sns/fifo", Paths: []string{wrapped + "SequenceNumber"},
		Verdict: unspecified, Ours: "the message's SequenceNumber in the notification a FIFO topic delivers", Moto: "no SequenceNumber",
		Why: "The documented notification fields do not list SequenceNumber, while SNS's FIFO examples show it in the notifications of FIFO topics; a consumer reads the fields it needs and ignores the others.", Source: "https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html"},
	{Scenario: "sns/fifo", Paths: []string{wrapped + "SignatureVersion"},
		Verdict: motoWrong, Ours: `"1", the topic's SignatureVersion`, Moto: `"2"`,
		Why: "A notification is signed with the topic's SignatureVersion, which is 1 (SHA1) unless set.", Source: snsAPI + "API_SetTopicAttributes.html"},
	{Scenario: "sns/fifo", Paths: []string{wrapped + "Signature", wrapped + "SigningCertURL", wrapped + "UnsubscribeURL"},
		Verdict: unspecified, Ours: "a random Signature, a certificate URL of the region, an UnsubscribeURL at the stack's endpoint", Moto: "a random Signature, a certificate URL with a random name, an UnsubscribeURL at AWS's endpoint",
		Why: "Neither endpoint holds SNS's signing key, so no signature can be verified; the unsubscribe link is the SNS endpoint's, which for the stack is its own.", Source: "https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html"},
	{Scenario: "sns/fifo", Paths: []string{"a duplicate has the original's MessageId", "a duplicate by content has the original's MessageId"},
		Verdict: unspecified, Ours: "answers a duplicate publish with the original message's MessageId", Moto: "a new MessageId (the message is still not delivered twice)",
		Why: "A message with a deduplication id of the last five minutes is accepted and not delivered; which MessageId the answer carries is not documented.", Source: snsAPI + "API_PublishBatchRequestEntry.html"},
}

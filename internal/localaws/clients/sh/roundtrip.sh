#!/usr/bin/env bash
# A consumer round trip with the AWS CLI (Debian's 2.9 speaks awsQuery to SQS
# and does not read AWS_ENDPOINT_URL, hence --endpoint-url).
#
# It subscribes a queue of its own to the events of EVENT_SOURCE on the
# default bus, writes an order and its outbox event (EVENT_ID, PENDING_SHARD
# and OCCURRED_MS given by the caller) to OUTBOX_TABLE in one
# transact-write-items call, in the contract's low-level format, receives the
# published envelope, checks it and deletes the message.
set -euo pipefail
aws() { "${AWS_CLI:-aws}" --endpoint-url "$AWS_ENDPOINT_URL" --output text "$@"; }

url=$(aws sqs create-queue --queue-name "$QUEUE_NAME" --query QueueUrl)
queue_arn=$(aws sqs get-queue-attributes --queue-url "$url" --attribute-names QueueArn --query Attributes.QueueArn)
rule_arn=$(aws events put-rule --name "$QUEUE_NAME" --event-pattern "{\"source\":[\"$EVENT_SOURCE\"]}" --query RuleArn)
policy="{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"Service\":\"events.amazonaws.com\"},\"Action\":\"sqs:SendMessage\",\"Resource\":\"$queue_arn\",\"Condition\":{\"ArnEquals\":{\"aws:SourceArn\":\"$rule_arn\"}}}]}"
aws sqs set-queue-attributes --queue-url "$url" --attributes "{\"Policy\":$(printf '%s' "$policy" | sed 's/"/\\"/g; s/^/"/; s/$/"/')}"
aws events put-targets --rule "$QUEUE_NAME" --targets "Id=queue,Arn=$queue_arn" >/dev/null

order="sh-$EVENT_ID"
occurred=$(date -u -d "@$((OCCURRED_MS / 1000))" +%Y-%m-%dT%H:%M:%S).$(printf %03d $((OCCURRED_MS % 1000)))Z
cat >"$TMPDIR/items.json" <<JSON
[
  {"Put": {"TableName": "$OUTBOX_TABLE", "Item": {"PK": {"S": "ORDER#$order"}, "SK": {"S": "ORDER"}}}},
  {"Put": {"TableName": "$OUTBOX_TABLE",
    "Item": {
      "PK": {"S": "ORDER#$order"}, "SK": {"S": "OUTBOX#$EVENT_ID"}, "eventId": {"S": "$EVENT_ID"},
      "source": {"S": "$EVENT_SOURCE"}, "detailType": {"S": "OrderPlaced"},
      "detail": {"S": "{\"orderId\":\"$order\",\"total\":42.5}"},
      "occurredAt": {"S": "$occurred"}, "status": {"S": "PENDING"},
      "outboxPendingShard": {"S": "$PENDING_SHARD"}, "outboxPendingSince": {"N": "$OCCURRED_MS"},
      "outboxVersion": {"N": "1"}},
    "ConditionExpression": "attribute_not_exists(#pk)",
    "ExpressionAttributeNames": {"#pk": "PK"}}}
]
JSON
aws dynamodb transact-write-items --transact-items "file://$TMPDIR/items.json"

deadline=$((SECONDS + 120))
while [ "$SECONDS" -lt "$deadline" ]; do
	received=$(aws sqs receive-message --queue-url "$url" --wait-time-seconds 5 --query 'Messages[0].[ReceiptHandle,Body]')
	if [ -z "$received" ] || [ "$received" = "None" ]; then continue; fi
	handle=${received%%$'\t'*}
	body=${received#*$'\t'}
	for want in "\"eventId\":\"$EVENT_ID\"" "\"source\":\"$EVENT_SOURCE\"" '"detail-type":"OrderPlaced"' "\"orderId\":\"$order\"" '"total":42.5'; do
		case "$body" in *"$want"*) ;; *) echo "message $body lacks $want" >&2; exit 1 ;; esac
	done
	aws sqs delete-message --queue-url "$url" --receipt-handle "$handle"
	left=$(aws sqs receive-message --queue-url "$url" --wait-time-seconds 1 --query 'length(Messages || `[]`)')
	if [ "$left" != "0" ]; then echo "the queue still holds $left messages after the delete" >&2; exit 1; fi
	echo "roundtrip ok $EVENT_ID"
	exit 0
done
echo "event $EVENT_ID did not arrive within 120 s" >&2
exit 1

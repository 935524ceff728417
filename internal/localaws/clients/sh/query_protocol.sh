#!/usr/bin/env bash
# SQS and CloudWatch through the AWS CLI's awsQuery protocol (Debian's 2.9):
# results and error codes as the CLI decodes them from the stack's XML.
set -euo pipefail
aws() { "${AWS_CLI:-aws}" --endpoint-url "$AWS_ENDPOINT_URL" --output text "$@"; }
fail() { echo "query protocol: $*" >&2; exit 1; }
code() { # the error code of a failing command
	local out
	if out=$(aws "$@" 2>&1); then fail "$* succeeded, want an error"; fi
	sed -n 's/.*An error occurred (\([^)]*\)).*/\1/p' <<<"$out"
}

url=$(aws sqs create-queue --queue-name cli-query --attributes VisibilityTimeout=45 --tags team=outbox --query QueueUrl)
[ "$(aws sqs get-queue-attributes --queue-url "$url" --attribute-names VisibilityTimeout --query Attributes.VisibilityTimeout)" = 45 ] || fail "VisibilityTimeout"
[ "$(aws sqs list-queue-tags --queue-url "$url" --query Tags.team)" = outbox ] || fail "tags"
aws sqs send-message --queue-url "$url" --message-body hello \
	--message-attributes '{"kind":{"DataType":"String","StringValue":"order"}}' >/dev/null
received=$(aws sqs receive-message --queue-url "$url" --wait-time-seconds 1 --message-attribute-names All \
	--query 'Messages[0].[Body,MessageAttributes.kind.StringValue,ReceiptHandle]')
IFS=$'\t' read -r body kind handle <<<"$received"
[ "$body $kind" = "hello order" ] || fail "received $received"
aws sqs delete-message --queue-url "$url" --receipt-handle "$handle"
[ "$(code sqs get-queue-url --queue-name missing)" = AWS.SimpleQueueService.NonExistentQueue ] || fail "missing queue code"
aws sqs delete-queue --queue-url "$url"

aws cloudwatch put-metric-alarm --alarm-name cli-alarm --namespace AWS/Lambda --metric-name Errors \
	--dimensions Name=FunctionName,Value=shop-relay --statistic Sum --period 60 --evaluation-periods 1 \
	--threshold 1 --comparison-operator GreaterThanOrEqualToThreshold
described=$(aws cloudwatch describe-alarms --alarm-names cli-alarm \
	--query 'MetricAlarms[0].[AlarmName,Threshold,Dimensions[0].Value,StateValue]')
[ "$described" = $'cli-alarm\t1.0\tshop-relay\tINSUFFICIENT_DATA' ] || fail "described $described"
[ "$(code cloudwatch delete-alarms --alarm-names missing)" = ResourceNotFound ] || fail "missing alarm code"
aws cloudwatch delete-alarms --alarm-names cli-alarm
[ "$(aws cloudwatch describe-alarms --alarm-name-prefix cli- --query 'length(MetricAlarms)')" = 0 ] || fail "alarms left"
echo "query protocol ok"

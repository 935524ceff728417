"""SQS and CloudWatch through boto3's awsQuery protocol (Debian's 1.26).

Each call's result and each error is checked as boto3 decodes it from the
XML the stack answers with; the script fails on the first mismatch.
"""
import datetime
import os
import sys

import boto3
from botocore.exceptions import ClientError

endpoint = os.environ.get("AWS_ENDPOINT_URL")
sqs = boto3.client("sqs", endpoint_url=endpoint)
cloudwatch = boto3.client("cloudwatch", endpoint_url=endpoint)


def expect(cond, what):
    if not cond:
        sys.exit("query protocol: " + what)


def error_code(call, **kwargs):
    try:
        call(**kwargs)
    except ClientError as e:
        return e.response["Error"]["Code"]
    sys.exit("query protocol: %s succeeded, want an error" % call.__name__)


for client in (sqs, cloudwatch):
    expect(client.meta.service_model.protocol == "query",
           "%s speaks %s, not query: this is not the boto3 under test" % (client.meta.service_model.service_name, client.meta.service_model.protocol))

# SQS: lists, maps and nested structures both ways.
url = sqs.create_queue(QueueName="query-protocol", Attributes={"VisibilityTimeout": "40", "DelaySeconds": "0"},
                       tags={"team": "outbox", "env": "test"})["QueueUrl"]
attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
expect(attrs["VisibilityTimeout"] == "40" and attrs["QueueArn"].endswith(":query-protocol"), "attributes %r" % attrs)
expect(sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "outbox", "env": "test"}, "tags")
expect(url in sqs.list_queues(QueueNamePrefix="query-")["QueueUrls"], "list_queues")
sent = sqs.send_message_batch(QueueUrl=url, Entries=[
    {"Id": "a", "MessageBody": "first", "MessageAttributes": {"kind": {"DataType": "String", "StringValue": "order"},
                                                             "n": {"DataType": "Number", "StringValue": "7"}}},
    {"Id": "b", "MessageBody": "second"},
    {"Id": "c", "MessageBody": "third", "DelaySeconds": 901},
])
expect(sorted(e["Id"] for e in sent["Successful"]) == ["a", "b"], "batch successes %r" % sent)
expect([(e["Id"], e["Code"], e["SenderFault"]) for e in sent["Failed"]] == [("c", "InvalidParameterValue", True)], "batch failures %r" % sent.get("Failed"))
got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                          AttributeNames=["All"], MessageAttributeNames=["All"])["Messages"]
expect(sorted(m["Body"] for m in got) == ["first", "second"], "received %r" % got)
first = next(m for m in got if m["Body"] == "first")
expect(first["MessageAttributes"]["kind"] == {"StringValue": "order", "DataType": "String"}, "message attributes %r" % first)
expect(first["Attributes"]["ApproximateReceiveCount"] == "1", "system attributes %r" % first["Attributes"])
changed = sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
    {"Id": "x", "ReceiptHandle": first["ReceiptHandle"], "VisibilityTimeout": 0}])
expect([e["Id"] for e in changed["Successful"]] == ["x"], "visibility %r" % changed)
deleted = sqs.delete_message_batch(QueueUrl=url, Entries=[
    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)] + [{"Id": "bad", "ReceiptHandle": "nope"}])
expect(len(deleted["Successful"]) == 2 and deleted["Failed"][0]["Code"] == "ReceiptHandleIsInvalid", "delete batch %r" % deleted)
expect(error_code(sqs.get_queue_url, QueueName="missing") == "AWS.SimpleQueueService.NonExistentQueue", "missing queue code")
expect(error_code(sqs.create_queue, QueueName="query-protocol", Attributes={"VisibilityTimeout": "5"}) == "QueueAlreadyExists",
       "existing queue code")
sqs.delete_queue(QueueUrl=url)

# CloudWatch: alarms with dimensions and metric math, tags, errors.
cloudwatch.put_metric_alarm(
    AlarmName="outbox-dlq", Namespace="AWS/SQS", MetricName="ApproximateNumberOfMessagesVisible",
    Dimensions=[{"Name": "QueueName", "Value": "dlq"}], Statistic="Maximum", Period=60,
    EvaluationPeriods=3, DatapointsToAlarm=2, Threshold=0.5, ComparisonOperator="GreaterThanThreshold",
    TreatMissingData="notBreaching", AlarmActions=["arn:aws:sns:us-east-1:000000000000:alerts"],
    Tags=[{"Key": "team", "Value": "outbox"}])
cloudwatch.put_metric_alarm(
    AlarmName="outbox-errors", EvaluationPeriods=1, Threshold=5, ComparisonOperator="GreaterThanOrEqualToThreshold",
    Metrics=[
        {"Id": "rate", "Expression": "100*errors/invocations", "ReturnData": True},
        {"Id": "errors", "ReturnData": False, "MetricStat": {"Metric": {"Namespace": "AWS/Lambda", "MetricName": "Errors"}, "Period": 300, "Stat": "Sum"}},
        {"Id": "invocations", "ReturnData": False, "MetricStat": {"Metric": {"Namespace": "AWS/Lambda", "MetricName": "Invocations"}, "Period": 300, "Stat": "Sum"}},
    ])
alarms = cloudwatch.describe_alarms(AlarmNamePrefix="outbox-")["MetricAlarms"]
expect([a["AlarmName"] for a in alarms] == ["outbox-dlq", "outbox-errors"], "alarms %r" % alarms)
dlq = alarms[0]
expect(dlq["Threshold"] == 0.5 and dlq["Period"] == 60 and dlq["DatapointsToAlarm"] == 2 and dlq["StateValue"] == "INSUFFICIENT_DATA",
       "alarm %r" % dlq)
expect(dlq["Dimensions"] == [{"Name": "QueueName", "Value": "dlq"}], "dimensions %r" % dlq["Dimensions"])
age = datetime.datetime.now(datetime.timezone.utc) - dlq["AlarmConfigurationUpdatedTimestamp"]
expect(abs(age.total_seconds()) < 60, "timestamp %r" % dlq["AlarmConfigurationUpdatedTimestamp"])
errors = alarms[1]
expect([m["Id"] for m in errors["Metrics"]] == ["rate", "errors", "invocations"] and
       errors["Metrics"][1]["MetricStat"]["Metric"]["MetricName"] == "Errors", "metric math %r" % errors["Metrics"])
page = cloudwatch.describe_alarms(AlarmNamePrefix="outbox-", MaxRecords=1)
expect(len(page["MetricAlarms"]) == 1 and "NextToken" in page, "paging %r" % page)
tags = cloudwatch.list_tags_for_resource(ResourceARN=dlq["AlarmArn"])["Tags"]
expect(tags == [{"Key": "team", "Value": "outbox"}], "tags %r" % tags)
expect(error_code(cloudwatch.put_metric_alarm, AlarmName="bad", Namespace="N", MetricName="M", Statistic="Sum", Period=45,
                  EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold") == "InvalidParameterValue",
       "bad period code")
expect(error_code(cloudwatch.delete_alarms, AlarmNames=["missing"]) == "ResourceNotFound", "missing alarm code")
cloudwatch.delete_alarms(AlarmNames=["outbox-dlq", "outbox-errors"])
expect(cloudwatch.describe_alarms(AlarmNamePrefix="outbox-")["MetricAlarms"] == [], "alarms left after delete")
print("query protocol ok")

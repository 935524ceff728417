"""A consumer round trip with boto3 (Debian's 1.26 speaks awsQuery to SQS).

It subscribes a queue of its own to the events of EVENT_SOURCE on the default
bus, writes an order and its outbox event to OUTBOX_TABLE in one
TransactWriteItems call with outbox_put from the record contract guide
(outbox_contract.py), receives the published envelope, checks it and deletes
the message. The detail's total is written as 1.0, which json.dumps keeps:
consumers compare numbers as numbers.
"""
import json
import os
import sys
import time

import boto3

from outbox_contract import outbox_put

endpoint = os.environ.get("AWS_ENDPOINT_URL")
table = os.environ["OUTBOX_TABLE"]
source = os.environ["EVENT_SOURCE"]
name = os.environ["QUEUE_NAME"]

sqs = boto3.client("sqs", endpoint_url=endpoint)
events = boto3.client("events", endpoint_url=endpoint)
dynamodb = boto3.client("dynamodb", endpoint_url=endpoint)

url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
rule_arn = events.put_rule(Name=name, EventPattern=json.dumps({"source": [source]}))["RuleArn"]
sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps({
    "Version": "2012-10-17",
    "Statement": [{
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com"},
        "Action": "sqs:SendMessage",
        "Resource": queue_arn,
        "Condition": {"ArnEquals": {"aws:SourceArn": rule_arn}},
    }],
})})
events.put_targets(Rule=name, Targets=[{"Id": "queue", "Arn": queue_arn}])

order = "py-" + str(int(time.time() * 1000))
detail = {"orderId": order, "total": 1.0, "lines": [{"sku": "A-1", "qty": 2}]}
put = outbox_put(table, source, "OrderPlaced", detail, partition_key="ORDER#" + order)
event_id = put["Put"]["Item"]["eventId"]["S"]
dynamodb.transact_write_items(TransactItems=[
    {"Put": {"TableName": table, "Item": {"PK": {"S": "ORDER#" + order}, "SK": {"S": "ORDER"}}}},
    put,
])
stored = dynamodb.get_item(TableName=table, ConsistentRead=True,
                           Key={"PK": {"S": "ORDER#" + order}, "SK": {"S": "OUTBOX#" + event_id}})["Item"]
if '"total":1.0' not in stored["detail"]["S"]:
    sys.exit("stored detail %r lacks json.dumps' spelling 1.0" % stored["detail"]["S"])


def check(envelope):
    problems = []
    if envelope.get("source") != source or envelope.get("detail-type") != "OrderPlaced":
        problems.append("source/detail-type %r/%r" % (envelope.get("source"), envelope.get("detail-type")))
    d = envelope.get("detail", {})
    if d.get("metadata", {}).get("eventId") != event_id:
        problems.append("eventId %r, want %s" % (d.get("metadata"), event_id))
    if d.get("data") != detail:  # 1 == 1.0: numbers compare as numbers
        problems.append("data %r, want %r" % (d.get("data"), detail))
    for key in ("version", "id", "account", "time", "region", "resources"):
        if key not in envelope:
            problems.append("no %s in the envelope" % key)
    return problems


deadline = time.time() + 120
while time.time() < deadline:
    messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5, MaxNumberOfMessages=10).get("Messages", [])
    for m in messages:
        problems = check(json.loads(m["Body"]))
        if problems:
            sys.exit("unexpected message %s: %s" % (m["Body"], "; ".join(problems)))
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        left = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
        if left:
            sys.exit("the queue still holds %d messages after the delete" % len(left))
        print("roundtrip ok", event_id)
        sys.exit(0)
sys.exit("event %s did not arrive within 120 s" % event_id)

// A consumer round trip with the AWS SDK for JavaScript v3.
//
// It subscribes a queue of its own to the events of EVENT_SOURCE on the
// default bus, writes an order and its outbox event to OUTBOX_TABLE in one
// TransactWriteItems call with outboxPut from the record contract guide
// (outbox.ts, compiled to outbox.js beside this file), and a second event
// through lib-dynamodb's DocumentClient, as the guide's variant does; it
// receives both published envelopes, checks them and deletes the messages.
import { DynamoDBClient, GetItemCommand, TransactWriteItemsCommand } from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient, SetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from "@aws-sdk/client-eventbridge";
import { DynamoDBDocumentClient, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { deepStrictEqual } from "node:assert/strict";
import { outboxPut } from "./outbox.js";

const endpoint = process.env.AWS_ENDPOINT_URL;
const table = process.env.OUTBOX_TABLE;
const source = process.env.EVENT_SOURCE;
const name = process.env.QUEUE_NAME;

const sqs = new SQSClient({ endpoint });
const events = new EventBridgeClient({ endpoint });
const dynamodb = new DynamoDBClient({ endpoint });
const documents = DynamoDBDocumentClient.from(dynamodb);

const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
const { RuleArn } = await events.send(new PutRuleCommand({ Name: name, EventPattern: JSON.stringify({ source: [source] }) }));
await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { Policy: JSON.stringify({
  Version: "2012-10-17",
  Statement: [{
    Effect: "Allow", Principal: { Service: "events.amazonaws.com" }, Action: "sqs:SendMessage",
    Resource: Attributes.QueueArn, Condition: { ArnEquals: { "aws:SourceArn": RuleArn } },
  }],
}) } }));
await events.send(new PutTargetsCommand({ Rule: name, Targets: [{ Id: "queue", Arn: Attributes.QueueArn }] }));

const order = `js-${Date.now()}`;
const want = new Map();

// The low-level client takes the guide's item as it is.
const detail = { orderId: order, total: 1, lines: [{ sku: "A-1", qty: 2 }] };
const put = outboxPut(table, { partitionKey: `ORDER#${order}`, source, detailType: "OrderPlaced", detail });
await dynamodb.send(new TransactWriteItemsCommand({
  TransactItems: [{ Put: { TableName: table, Item: { PK: { S: `ORDER#${order}` }, SK: { S: "ORDER" } } } }, put],
}));
want.set(put.Put.Item.eventId.S, detail);
const stored = await dynamodb.send(new GetItemCommand({ TableName: table, ConsistentRead: true, Key: { PK: put.Put.Item.PK, SK: put.Put.Item.SK } }));
if (!stored.Item.detail.S.includes('"total":1,')) throw new Error(`stored detail ${stored.Item.detail.S} lacks JSON.stringify's spelling 1`);

// The DocumentClient takes plain values: the guide's variant unmarshalls the item.
const docDetail = { orderId: `${order}-doc`, total: 2.5 };
const docPut = outboxPut(table, { partitionKey: `ORDER#${order}-doc`, source, detailType: "OrderPlaced", detail: docDetail }).Put;
const item = unmarshall(docPut.Item);
await documents.send(new TransactWriteCommand({
  TransactItems: [
    { Put: { TableName: table, Item: { PK: `ORDER#${order}-doc`, SK: "ORDER" } } },
    { Put: { TableName: docPut.TableName, Item: item, ConditionExpression: docPut.ConditionExpression, ExpressionAttributeNames: docPut.ExpressionAttributeNames } },
  ],
}));
want.set(item.eventId, docDetail);

const deadline = Date.now() + 120_000;
while (want.size > 0 && Date.now() < deadline) {
  const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 5, MaxNumberOfMessages: 10 }));
  for (const m of Messages) {
    const envelope = JSON.parse(m.Body);
    const id = envelope.detail?.metadata?.eventId;
    if (!want.has(id)) throw new Error(`unexpected message ${m.Body}`);
    if (envelope.source !== source || envelope["detail-type"] !== "OrderPlaced") throw new Error(`envelope ${m.Body}`);
    for (const key of ["version", "id", "account", "time", "region", "resources"]) {
      if (!(key in envelope)) throw new Error(`no ${key} in ${m.Body}`);
    }
    deepStrictEqual(envelope.detail.data, want.get(id));
    await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
    want.delete(id);
    console.log("roundtrip ok", id);
  }
}
if (want.size > 0) throw new Error(`events ${[...want.keys()]} did not arrive within 120 s`);
const { Messages: left = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
if (left.length > 0) throw new Error(`the queue still holds ${left.length} messages after the deletes`);

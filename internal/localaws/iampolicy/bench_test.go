package iampolicy

import "testing"

// BenchmarkEvaluate measures the authorisation of one call against a
// role's policy of the relay's size, as every call of a function with a
// role is authorised.
func BenchmarkEvaluate(b *testing.B) {
	doc := `{"Version":"2012-10-17","Statement":[
{"Effect":"Allow","Action":["dynamodb:DescribeStream","dynamodb:GetRecords","dynamodb:GetShardIterator","dynamodb:ListStreams","dynamodb:ListShards"],"Resource":"arn:aws:dynamodb:us-east-1:000000000000:table/chaos-outbox/stream/*"},
{"Effect":"Allow","Action":["dynamodb:UpdateItem","dynamodb:GetItem","dynamodb:Query","dynamodb:BatchWriteItem"],"Resource":["arn:aws:dynamodb:us-east-1:000000000000:table/chaos-outbox","arn:aws:dynamodb:us-east-1:000000000000:table/chaos-outbox/index/*"]},
{"Effect":"Allow","Action":"events:PutEvents","Resource":"arn:aws:events:us-east-1:000000000000:event-bus/default"},
{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"arn:aws:sqs:us-east-1:000000000000:chaos-relay-dlq"},
{"Effect":"Allow","Action":["logs:CreateLogStream","logs:PutLogEvents"],"Resource":"arn:aws:logs:us-east-1:000000000000:log-group:/aws/lambda/chaos-relay:*"}]}`
	req := Request{Action: "dynamodb:UpdateItem", Resource: "arn:aws:dynamodb:us-east-1:000000000000:table/chaos-outbox"}
	for b.Loop() {
		if Evaluate([]string{doc}, req) != Allow {
			b.Fatal("the policy does not allow UpdateItem")
		}
	}
}

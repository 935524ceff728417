package iam

// awsManagedPolicies are the AWS managed policies the stack knows, with
// their documents as AWS publishes them (default version v1).
var awsManagedPolicies = []struct {
	name, path, id, description, document string
}{
	{
		name: "AWSLambdaBasicExecutionRole", path: "/service-role/", id: "ANPAJNCQGXC42545SKXIK",
		description: "Provides write permissions to CloudWatch Logs.",
		document:    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}`,
	},
	{
		name: "AWSLambdaDynamoDBExecutionRole", path: "/service-role/", id: "ANPAIP7WNAGMIPYNW4WQG",
		description: "Provides list and read access to DynamoDB streams and write permissions to CloudWatch logs.",
		document:    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:DescribeStream","dynamodb:GetRecords","dynamodb:GetShardIterator","dynamodb:ListStreams","logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}`,
	},
	{
		name: "AWSLambdaSQSQueueExecutionRole", path: "/service-role/", id: "ANPAJFWJZI6JNND4TSELK",
		description: "Provides receive message, delete message, and read attribute access to SQS queues, and write permissions to CloudWatch logs.",
		document:    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:ReceiveMessage","sqs:DeleteMessage","sqs:GetQueueAttributes","logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}`,
	},
	{
		name: "AWSLambdaRole", path: "/service-role/", id: "ANPAJX4DPCRGTC4NFDUXI",
		description: "Default policy for AWS Lambda service role.",
		document:    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["lambda:InvokeFunction"],"Resource":["*"]}]}`,
	},
	{
		name: "AdministratorAccess", path: "/", id: "ANPAIWMBCKSKIEE64ZLYK",
		description: "Provides full access to AWS services and resources.",
		document:    `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`,
	},
}

// ManagedPolicyDocument returns the document of the AWS managed policy
// name ("AWSLambdaBasicExecutionRole") as the stack knows it, and whether
// it knows it.
func ManagedPolicyDocument(name string) (string, bool) {
	for _, p := range awsManagedPolicies {
		if p.name == name {
			return p.document, true
		}
	}
	return "", false
}

package localawstest

// TrustPolicy is a role trust policy that lets the AWS service principal
// service (such as "lambda.amazonaws.com") assume the role.
func TrustPolicy(service string) string {
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"` + service + `"},"Action":"sts:AssumeRole"}]}`
}

// SendMessagePolicy is a queue policy that lets the AWS service principal
// service send messages to the queue queueArn ("*" for any) on behalf of
// sourceArn (such as a topic or a rule).
func SendMessagePolicy(service, queueArn, sourceArn string) string {
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"` + service + `"},"Action":"sqs:SendMessage","Resource":"` + queueArn +
		`","Condition":{"ArnEquals":{"aws:SourceArn":"` + sourceArn + `"}}}]}`
}

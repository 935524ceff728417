package provision

// ApplyPermission is what the identity that applies (creates, reads,
// updates, imports and destroys a pipeline) needs for a setting: With names
// it, empty for every pipeline.
type ApplyPermission struct {
	With    string
	Actions []string
}

// ApplyPermissions are the IAM actions of the calls the Provisioner makes,
// for every pipeline and for each setting that adds calls. S3 operations
// are authorised by actions of other names: HeadBucket and ListObjectsV2
// by s3:ListBucket, DeleteObjects by s3:DeleteObject, DeleteBucketLifecycle
// by s3:PutLifecycleConfiguration, DeleteBucketTagging by
// s3:PutBucketTagging ("Actions, resources, and condition keys for Amazon
// S3", Service Authorization Reference). Lambda checks the EC2 descriptions
// for the identity that attaches a function to a VPC ("Giving Lambda
// functions access to resources in an Amazon VPC", Lambda developer guide).
func ApplyPermissions() []ApplyPermission {
	return []ApplyPermission{
		{Actions: []string{
			"dynamodb:CreateTable", "dynamodb:DescribeTable", "dynamodb:UpdateTable", "dynamodb:DeleteTable",
			"dynamodb:DescribeTimeToLive", "dynamodb:UpdateTimeToLive", "dynamodb:DescribeContinuousBackups",
			"dynamodb:UpdateContinuousBackups", "dynamodb:TagResource", "dynamodb:UntagResource",
			"dynamodb:ListTagsOfResource", "dynamodb:Scan", "dynamodb:Query",
			"sqs:CreateQueue", "sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:SetQueueAttributes",
			"sqs:DeleteQueue", "sqs:TagQueue", "sqs:UntagQueue", "sqs:ListQueueTags",
			"events:DescribeEventBus", "sns:GetTopicAttributes",
			"lambda:CreateFunction", "lambda:GetFunction", "lambda:GetFunctionConfiguration",
			"lambda:UpdateFunctionCode", "lambda:UpdateFunctionConfiguration", "lambda:DeleteFunction",
			"lambda:PutFunctionConcurrency", "lambda:DeleteFunctionConcurrency", "lambda:TagResource",
			"lambda:UntagResource", "lambda:CreateEventSourceMapping", "lambda:GetEventSourceMapping",
			"lambda:UpdateEventSourceMapping", "lambda:DeleteEventSourceMapping", "lambda:ListEventSourceMappings",
			"iam:CreateRole", "iam:GetRole", "iam:DeleteRole", "iam:UpdateAssumeRolePolicy", "iam:PutRolePolicy",
			"iam:GetRolePolicy", "iam:DeleteRolePolicy", "iam:ListRolePolicies", "iam:TagRole", "iam:UntagRole",
			"iam:PassRole",
			"logs:CreateLogGroup", "logs:DeleteLogGroup", "logs:DescribeLogGroups", "logs:PutRetentionPolicy",
			"logs:TagResource", "logs:UntagResource", "logs:ListTagsForResource",
			"scheduler:CreateSchedule", "scheduler:GetSchedule", "scheduler:UpdateSchedule",
			"scheduler:DeleteSchedule", "scheduler:ListSchedules",
		}},
		{With: "`alarms`", Actions: []string{
			"cloudwatch:PutMetricAlarm", "cloudwatch:DescribeAlarms", "cloudwatch:DeleteAlarms",
			"cloudwatch:TagResource", "cloudwatch:UntagResource", "cloudwatch:ListTagsForResource",
		}},
		{With: "`claim_check`", Actions: []string{
			"s3:CreateBucket", "s3:DeleteBucket", "s3:ListBucket", "s3:DeleteObject",
			"s3:GetEncryptionConfiguration", "s3:PutEncryptionConfiguration",
			"s3:GetLifecycleConfiguration", "s3:PutLifecycleConfiguration",
			"s3:GetBucketPolicy", "s3:PutBucketPolicy", "s3:GetBucketTagging", "s3:PutBucketTagging",
			"s3:GetBucketPublicAccessBlock", "s3:PutBucketPublicAccessBlock",
		}},
		{With: "`iam.permissions_boundary`", Actions: []string{"iam:PutRolePermissionsBoundary", "iam:DeleteRolePermissionsBoundary"}},
		{With: "`relay.vpc_config`", Actions: []string{"ec2:DescribeSecurityGroups", "ec2:DescribeSubnets", "ec2:DescribeVpcs"}},
	}
}

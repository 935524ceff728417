package awsops

import (
	"context"
	"errors"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The settings of a DynamoDB table that both a pipeline's table and a
// subscription's inbox have: TTL, point-in-time recovery and KMS.

// TTLAttribute returns the table's TTL attribute when TTL is enabled or
// being enabled, else "".
func TTLAttribute(ctx context.Context, c *dynamodb.Client, table string) (string, error) {
	out, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		return "", err
	}
	if d := out.TimeToLiveDescription; d != nil &&
		(d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return aws.ToString(d.AttributeName), nil
	}
	return "", nil
}

// PointInTimeRecovery reports whether the table has point-in-time recovery.
func PointInTimeRecovery(ctx context.Context, c *dynamodb.Client, table string) (bool, error) {
	out, err := c.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)})
	if err != nil {
		return false, err
	}
	d := out.ContinuousBackupsDescription
	return d != nil && d.PointInTimeRecoveryDescription != nil &&
		d.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == types.PointInTimeRecoveryStatusEnabled, nil
}

// TableSSE is the SSESpecification of a customer managed key, or of the
// AWS owned key when key is empty.
func TableSSE(key string) *types.SSESpecification {
	if key == "" {
		return &types.SSESpecification{Enabled: aws.Bool(false)}
	}
	return &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: aws.String(key)}
}

// TableKMSKey is the ARN of the table's KMS key; "" for the AWS owned key.
func TableKMSKey(d *types.TableDescription) string {
	if d.SSEDescription == nil || d.SSEDescription.Status != types.SSEStatusEnabled {
		return ""
	}
	return aws.ToString(d.SSEDescription.KMSMasterKeyArn)
}

// TableTags returns the tags of the table arn, every page of them.
func TableTags(ctx context.Context, c *dynamodb.Client, arn string) (map[string]string, error) {
	tags := map[string]string{}
	var token *string
	for {
		out, err := c.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn), NextToken: token})
		if err != nil {
			return nil, err
		}
		maps.Copy(tags, TagMap(out.Tags, func(t types.Tag) (*string, *string) { return t.Key, t.Value }))
		if token = out.NextToken; token == nil {
			return tags, nil
		}
	}
}

// TableTagList returns tags as DynamoDB tags, sorted by key.
func TableTagList(tags map[string]string) []types.Tag {
	return TagList(tags, func(k, v *string) types.Tag { return types.Tag{Key: k, Value: v} })
}

// SyncTableTags brings the tags of the table arn to want.
func SyncTableTags(ctx context.Context, c *dynamodb.Client, arn string, want map[string]string) error {
	have, err := TableTags(ctx, c, arn)
	if err != nil {
		return err
	}
	return SyncTags(ctx, have, want, func(ctx context.Context, keys []string) error {
		_, err := c.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := c.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: TableTagList(set)})
		return err
	})
}

// WaitTableActive waits with w until the table name and each of its global
// secondary indexes are ACTIVE, and returns its description then.
func WaitTableActive(ctx context.Context, w Waiter, c *dynamodb.Client, name string) (*types.TableDescription, error) {
	var desc *types.TableDescription
	err := w.For(ctx, "table "+name+" to be ACTIVE", func(ctx context.Context) (bool, error) {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if IsNotFound(err) {
			return false, errors.New("the table disappeared")
		}
		if err != nil {
			return false, err
		}
		desc = out.Table
		return tableActive(desc), nil
	})
	return desc, err
}

// tableActive tells whether the table and each of its global secondary
// indexes are ACTIVE.
func tableActive(d *types.TableDescription) bool {
	if d.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range d.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

// UpdateTable makes the change of in to its table and waits with w until
// the table is ACTIVE again.
func UpdateTable(ctx context.Context, w Waiter, c *dynamodb.Client, in *dynamodb.UpdateTableInput) error {
	if _, err := c.UpdateTable(ctx, in); err != nil {
		return err
	}
	_, err := WaitTableActive(ctx, w, c, aws.ToString(in.TableName))
	return err
}

package provision

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TagAdoptedBy is set on an adopted table to the name of the pipeline that
// adopted it. A table holds the outbox of one pipeline: a second pipeline
// that finds the tag refuses to adopt the table, so that it can never
// revert the stream, index or TTL that the first one still needs.
const TagAdoptedBy = "outbox:adopted-by"

// claimTable checks that no other pipeline owns or adopted the table, and
// tags an adopted one with the pipeline's name.
func (c *Pipeline) claimTable(ctx context.Context, s Spec, arn string) error {
	tags, err := c.tableTags(ctx, arn)
	if err != nil {
		return fmt.Errorf("reading its tags: %w", err)
	}
	for _, k := range []string{TagAdoptedBy, TagPipeline} {
		if other := tags[k]; other != "" && other != s.Name {
			return fmt.Errorf("it belongs to the outbox pipeline %s (tag %s): a table holds the outbox of one pipeline, since the pipelines would undo each other's stream, index and TTL; "+
				"give this pipeline its own table, or use pipeline %s's", other, k, other)
		}
	}
	if !s.Table.Existing || tags[TagAdoptedBy] == s.Name {
		return nil
	}
	_, err = c.DynamoDB.TagResource(ctx, &dynamodb.TagResourceInput{
		ResourceArn: aws.String(arn), Tags: []types.Tag{{Key: aws.String(TagAdoptedBy), Value: aws.String(s.Name)}},
	})
	if err != nil {
		return fmt.Errorf("tagging it %s=%s: %w", TagAdoptedBy, s.Name, err)
	}
	return nil
}

// releaseTable removes the adoption tag of the pipeline from an adopted
// table, if it is the pipeline's own.
func (c *Pipeline) releaseTable(ctx context.Context, st *State) error {
	if st.TableARN == "" {
		return nil
	}
	tags, err := c.tableTags(ctx, st.TableARN)
	if err != nil || tags[TagAdoptedBy] != st.Name {
		return err
	}
	_, err = c.DynamoDB.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: aws.String(st.TableARN), TagKeys: []string{TagAdoptedBy}})
	return err
}

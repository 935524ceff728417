package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// pointInTimeRecovery reports whether the table has point-in-time recovery.
func (c *Pipeline) pointInTimeRecovery(ctx context.Context, table string) (bool, error) {
	out, err := c.DynamoDB.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)})
	if err != nil {
		return false, err
	}
	d := out.ContinuousBackupsDescription
	return d != nil && d.PointInTimeRecoveryDescription != nil &&
		d.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == types.PointInTimeRecoveryStatusEnabled, nil
}

// ensureTableProtection brings the deletion protection and point-in-time
// recovery of a dedicated table to the Spec's.
func (c *Pipeline) ensureTableProtection(ctx context.Context, s Spec, st *State) error {
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil || desc == nil {
		return fmt.Errorf("reading it: %w", errors.Join(err, errIfNil(desc)))
	}
	if want := *s.Table.DeletionProtection; aws.ToBool(desc.DeletionProtectionEnabled) != want {
		if _, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(st.TableName), DeletionProtectionEnabled: aws.Bool(want),
		}); err != nil {
			return fmt.Errorf("setting its deletion protection to %t: %w", want, err)
		}
		if _, err := c.waitTableActive(ctx, st.TableName); err != nil {
			return err
		}
	}
	if want := s.Table.KMSKeyARN; tableKMSKey(desc) != want {
		if _, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(st.TableName), SSESpecification: tableSSE(want),
		}); err != nil {
			return fmt.Errorf("setting its encryption key to %q: %w", want, err)
		}
		if _, err := c.waitTableActive(ctx, st.TableName); err != nil {
			return err
		}
	}
	have, err := c.pointInTimeRecovery(ctx, st.TableName)
	if err != nil {
		return fmt.Errorf("reading its point-in-time recovery: %w", err)
	}
	if want := *s.Table.PointInTimeRecovery; have != want {
		if _, err := c.DynamoDB.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
			TableName:                        aws.String(st.TableName),
			PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(want)},
		}); err != nil {
			return fmt.Errorf("setting its point-in-time recovery to %t: %w", want, err)
		}
	}
	return nil
}

// readTableProtection records drift of the protection settings of a
// dedicated table.
func (c *Pipeline) readTableProtection(ctx context.Context, s Spec, st State, desc *types.TableDescription, d *Drift) error {
	if !st.TableOwned {
		return nil
	}
	var fields []string
	if aws.ToBool(desc.DeletionProtectionEnabled) != *s.Table.DeletionProtection {
		fields = append(fields, "deletion_protection")
	}
	if tableKMSKey(desc) != s.Table.KMSKeyARN {
		fields = append(fields, "kms_key_arn")
	}
	pitr, err := c.pointInTimeRecovery(ctx, st.TableName)
	if err != nil {
		return fmt.Errorf("reading table (%s) point-in-time recovery: %w", st.TableName, err)
	}
	if pitr != *s.Table.PointInTimeRecovery {
		fields = append(fields, "point_in_time_recovery")
	}
	d.AddChanged(ComponentTable, fields...)
	return nil
}

// unprotectTable turns off the deletion protection of a table about to be
// deleted. Delete calls it only after checkUndelivered passed.
func (c *Pipeline) unprotectTable(ctx context.Context, table string) error {
	desc, err := c.describeTable(ctx, table)
	if err != nil || desc == nil || !aws.ToBool(desc.DeletionProtectionEnabled) {
		return err
	}
	if _, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(table), DeletionProtectionEnabled: aws.Bool(false),
	}); err != nil {
		return err
	}
	_, err = c.waitTableActive(ctx, table)
	return err
}

// tableSSE is the SSESpecification of a customer managed key, or of the
// AWS owned key when key is empty.
func tableSSE(key string) *types.SSESpecification {
	if key == "" {
		return &types.SSESpecification{Enabled: aws.Bool(false)}
	}
	return &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: aws.String(key)}
}

// tableKMSKey is the ARN of the table's KMS key; "" for the AWS owned key.
func tableKMSKey(d *types.TableDescription) string {
	if d.SSEDescription == nil || d.SSEDescription.Status != types.SSEStatusEnabled {
		return ""
	}
	return aws.ToString(d.SSEDescription.KMSMasterKeyArn)
}

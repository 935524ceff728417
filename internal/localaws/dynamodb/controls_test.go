package dynamodb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

func keyOnlyTable(name string) *dynamodb.CreateTableInput {
	return localawstest.TableInput(name, "PK", "", "")
}

func (e *env) describe(t *testing.T, name string) *types.TableDescription {
	t.Helper()
	d, err := e.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatalf("DescribeTable %s: %v", name, err)
	}
	return d.Table
}

func TestDeletionProtectionRefusesDeleteTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	in := keyOnlyTable("protected")
	in.DeletionProtectionEnabled = aws.Bool(true)
	out, err := e.ddb.CreateTable(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if !aws.ToBool(out.TableDescription.DeletionProtectionEnabled) || !aws.ToBool(e.describe(t, "protected").DeletionProtectionEnabled) {
		t.Fatal("CreateTable with DeletionProtectionEnabled: the table does not report it")
	}
	_, err = e.ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("protected")})
	if localawstest.ErrorCode(err) != "ValidationException" || !strings.Contains(err.Error(), "protected against deletion") {
		t.Fatalf("DeleteTable of a protected table = %v; want ValidationException about deletion protection", err)
	}
	e.describe(t, "protected") // still there

	if _, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("protected"), DeletionProtectionEnabled: aws.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	if aws.ToBool(e.describe(t, "protected").DeletionProtectionEnabled) {
		t.Fatal("UpdateTable DeletionProtectionEnabled=false: still reported on")
	}
	if _, err := e.ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("protected")}); err != nil {
		t.Fatalf("DeleteTable after turning protection off: %v", err)
	}

	// Turned on by UpdateTable on a table created without it.
	if _, err := e.ddb.CreateTable(ctx, keyOnlyTable("later")); err != nil {
		t.Fatal(err)
	}
	if aws.ToBool(e.describe(t, "later").DeletionProtectionEnabled) {
		t.Fatal("deletion protection is on by default")
	}
	if _, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("later"), DeletionProtectionEnabled: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("later")}); localawstest.ErrorCode(err) != "ValidationException" {
		t.Fatalf("DeleteTable after UpdateTable turned protection on = %v", err)
	}
}

func TestPointInTimeRecovery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	if _, err := e.ddb.CreateTable(ctx, keyOnlyTable("pitr")); err != nil {
		t.Fatal(err)
	}
	describe := func() *types.PointInTimeRecoveryDescription {
		t.Helper()
		out, err := e.ddb.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String("pitr")})
		if err != nil {
			t.Fatal(err)
		}
		if out.ContinuousBackupsDescription.ContinuousBackupsStatus != types.ContinuousBackupsStatusEnabled {
			t.Fatalf("ContinuousBackupsStatus = %q; DynamoDB enables it on every table", out.ContinuousBackupsDescription.ContinuousBackupsStatus)
		}
		return out.ContinuousBackupsDescription.PointInTimeRecoveryDescription
	}
	if p := describe(); p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusDisabled || p.EarliestRestorableDateTime != nil {
		t.Fatalf("new table PITR = %+v; want DISABLED", p)
	}

	before := time.Now().Add(-time.Second)
	up, err := e.ddb.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("pitr"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*types.PointInTimeRecoveryDescription{up.ContinuousBackupsDescription.PointInTimeRecoveryDescription, describe()} {
		if p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled || aws.ToInt32(p.RecoveryPeriodInDays) != 35 ||
			p.EarliestRestorableDateTime == nil || p.EarliestRestorableDateTime.Before(before) || p.LatestRestorableDateTime == nil ||
			p.LatestRestorableDateTime.Before(*p.EarliestRestorableDateTime) {
			t.Fatalf("PITR after enabling = %+v", p)
		}
	}

	if _, err := e.ddb.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("pitr"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true), RecoveryPeriodInDays: aws.Int32(7)}}); err != nil {
		t.Fatal(err)
	}
	if p := describe(); aws.ToInt32(p.RecoveryPeriodInDays) != 7 {
		t.Fatalf("RecoveryPeriodInDays = %d, want 7", aws.ToInt32(p.RecoveryPeriodInDays))
	}
	_, err = e.ddb.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("pitr"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true), RecoveryPeriodInDays: aws.Int32(36)}})
	localawstest.WantCode(t, err, "ValidationException", "RecoveryPeriodInDays 36")

	if _, err := e.ddb.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("pitr"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	if p := describe(); p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusDisabled {
		t.Fatalf("PITR after disabling = %+v", p)
	}

	_, err = e.ddb.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String("missing")})
	localawstest.WantError[*types.TableNotFoundException](t, err, "DescribeContinuousBackups of a missing table")
}

func TestServerSideEncryptionDescription(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	const keyArn = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"
	in := keyOnlyTable("cmk")
	in.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: aws.String(keyArn)}
	out, err := e.ddb.CreateTable(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*types.SSEDescription{out.TableDescription.SSEDescription, e.describe(t, "cmk").SSEDescription} {
		if d == nil || d.Status != types.SSEStatusEnabled || d.SSEType != types.SSETypeKms || aws.ToString(d.KMSMasterKeyArn) != keyArn {
			t.Fatalf("SSEDescription = %+v; want ENABLED KMS %s", d, keyArn)
		}
	}

	if _, err := e.ddb.CreateTable(ctx, keyOnlyTable("owned")); err != nil {
		t.Fatal(err)
	}
	if d := e.describe(t, "owned").SSEDescription; d != nil {
		t.Fatalf("default encryption (AWS owned key) has SSEDescription %+v; DynamoDB returns none", d)
	}

	// A bare key id becomes the key's ARN; enabling without a key is the
	// AWS managed key; disabling returns to the AWS owned key.
	if _, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("owned"),
		SSESpecification: &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: aws.String("abcd-1234")}}); err != nil {
		t.Fatal(err)
	}
	if d := e.describe(t, "owned").SSEDescription; d == nil || !strings.HasPrefix(aws.ToString(d.KMSMasterKeyArn), "arn:aws:kms:us-east-1:") ||
		!strings.HasSuffix(aws.ToString(d.KMSMasterKeyArn), ":key/abcd-1234") {
		t.Fatalf("SSEDescription after UpdateTable with a key id = %+v", d)
	}
	if _, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("owned"),
		SSESpecification: &types.SSESpecification{Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	managed := e.describe(t, "owned").SSEDescription
	if managed == nil || !strings.Contains(aws.ToString(managed.KMSMasterKeyArn), ":key/") || aws.ToString(managed.KMSMasterKeyArn) == keyArn {
		t.Fatalf("SSEDescription with the AWS managed key = %+v", managed)
	}
	if _, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("owned"),
		SSESpecification: &types.SSESpecification{Enabled: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	if d := e.describe(t, "owned").SSEDescription; d != nil {
		t.Fatalf("SSEDescription after disabling = %+v", d)
	}

	bad := keyOnlyTable("bad")
	bad.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(false), KMSMasterKeyId: aws.String(keyArn)}
	if _, err := e.ddb.CreateTable(ctx, bad); localawstest.ErrorCode(err) != "ValidationException" {
		t.Fatalf("KMSMasterKeyId with SSE disabled = %v; want ValidationException", err)
	}
}

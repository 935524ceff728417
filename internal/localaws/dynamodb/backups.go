package dynamodb

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Point-in-time recovery and server-side encryption are table settings the
// stack records and reports as DynamoDB does; no backup is taken and nothing
// is encrypted.

// pitr is a table's point-in-time recovery setting.
type pitr struct {
	enabled   bool
	days      int
	enabledAt time.Time
}

// sse is a table's server-side encryption setting: with a KMS key (the
// AWS managed key alias/aws/dynamodb unless KMSMasterKeyId names one), or
// with an AWS owned key (the default, keyArn "").
type sse struct {
	keyArn string
}

type sseSpec struct {
	Enabled        *bool  `json:"Enabled"`
	SSEType        string `json:"SSEType"`
	KMSMasterKeyId string `json:"KMSMasterKeyId"` //nolint:revive // AWS spelling
}

// maxRecoveryDays is the longest PITR recovery period (and the default).
const maxRecoveryDays = 35

// resolveSSE turns an SSESpecification into the table's setting.
func (s *Service) resolveSSE(spec *sseSpec) (sse, error) {
	if spec == nil || spec.Enabled == nil || !*spec.Enabled {
		if spec != nil && spec.KMSMasterKeyId != "" {
			return sse{}, awsapi.ValidationException("One or more parameter values were invalid: KMSMasterKeyId can only be specified when SSE is enabled")
		}
		return sse{}, nil
	}
	switch spec.SSEType {
	case "", "KMS":
	case "AES256":
		return sse{}, awsapi.ValidationException("One or more parameter values were invalid: Server-Side Encryption type AES256 is not supported; use KMS")
	default:
		return sse{}, awsapi.ValidationException("1 validation error detected: Value '%s' at 'sSESpecification.sSEType' failed to satisfy constraint: Member must satisfy enum value set: [AES256, KMS]", spec.SSEType)
	}
	return sse{keyArn: s.kmsKeyArn(spec.KMSMasterKeyId)}, nil
}

// kmsKeyArn is the ARN of a key given by key id, key ARN, alias name or
// alias ARN; "" is the account's AWS managed key for DynamoDB.
func (s *Service) kmsKeyArn(id string) string {
	switch {
	case strings.HasPrefix(id, "arn:"):
		return id
	case id == "" || id == "alias/aws/dynamodb":
		sum := sha256.Sum256([]byte("alias/aws/dynamodb\x00" + s.env.AccountID + "\x00" + s.env.Region))
		u := fmt.Sprintf("%x", sum[:16])
		return s.env.ARN("kms", "key/"+u[:8]+"-"+u[8:12]+"-"+u[12:16]+"-"+u[16:20]+"-"+u[20:32])
	case strings.HasPrefix(id, "alias/"):
		return s.env.ARN("kms", id)
	default:
		return s.env.ARN("kms", "key/"+id)
	}
}

// sseDescription is DescribeTable's SSEDescription; nil with an AWS owned
// key, where DynamoDB returns none.
func (e sse) description() map[string]any {
	if e.keyArn == "" {
		return nil
	}
	return map[string]any{"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": e.keyArn}
}

// continuousBackupsLocked finds the table a backup operation names and
// authorises action on it; s.mu must be held.
func (s *Service) continuousBackupsLocked(req *awsapi.Request, tableName, action string) (*table, error) {
	t, err := s.tableLocked(tableName)
	if err != nil {
		return nil, awsapi.NewError("TableNotFoundException", "Table not found: %s", tableName)
	}
	if err := req.Authorize(action, t.arn); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Service) describeContinuousBackups(req *awsapi.Request, in *tableNameInput) (any, error) {
	t, err := s.continuousBackupsLocked(req, in.TableName, "dynamodb:DescribeContinuousBackups")
	if err != nil {
		return nil, err
	}
	return s.continuousBackupsDescription(t), nil
}

type updateContinuousBackupsInput struct {
	TableName                        string
	PointInTimeRecoverySpecification *struct {
		PointInTimeRecoveryEnabled *bool
		RecoveryPeriodInDays       *int
	}
}

func (s *Service) updateContinuousBackups(req *awsapi.Request, in *updateContinuousBackupsInput) (any, error) {
	spec := in.PointInTimeRecoverySpecification
	if spec == nil || spec.PointInTimeRecoveryEnabled == nil {
		return nil, awsapi.ValidationException("1 validation error detected: Value null at 'pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled' failed to satisfy constraint: Member must not be null")
	}
	days := maxRecoveryDays
	if spec.RecoveryPeriodInDays != nil {
		days = *spec.RecoveryPeriodInDays
		if days < 1 || days > maxRecoveryDays {
			return nil, awsapi.ValidationException("1 validation error detected: Value '%d' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy constraint: Member must have value between 1 and 35", days)
		}
		if !*spec.PointInTimeRecoveryEnabled {
			return nil, awsapi.ValidationException("One or more parameter values were invalid: RecoveryPeriodInDays can only be specified when PointInTimeRecoveryEnabled is true")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.continuousBackupsLocked(req, in.TableName, "dynamodb:UpdateContinuousBackups")
	if err != nil {
		return nil, err
	}
	switch {
	case !*spec.PointInTimeRecoveryEnabled:
		t.pitr = pitr{}
	case !t.pitr.enabled:
		t.pitr = pitr{enabled: true, days: days, enabledAt: s.env.Time()}
	default:
		t.pitr.days = days
	}
	return s.continuousBackupsDescription(t), nil
}

// continuousBackupsDescription is the answer of both calls: continuous
// backups are always on; PITR restores from when it was enabled (or the
// recovery period ago) to five minutes ago, or to the enabling time when
// that is more recent.
func (s *Service) continuousBackupsDescription(t *table) map[string]any {
	p := map[string]any{"PointInTimeRecoveryStatus": "DISABLED"}
	if t.pitr.enabled {
		now := s.env.Time()
		earliest := t.pitr.enabledAt
		if floor := now.Add(-time.Duration(t.pitr.days) * 24 * time.Hour); earliest.Before(floor) {
			earliest = floor
		}
		latest := now.Add(-5 * time.Minute)
		if latest.Before(earliest) {
			latest = earliest
		}
		p = map[string]any{
			"PointInTimeRecoveryStatus":  "ENABLED",
			"RecoveryPeriodInDays":       t.pitr.days,
			"EarliestRestorableDateTime": awsapi.Epoch(earliest),
			"LatestRestorableDateTime":   awsapi.Epoch(latest),
		}
	}
	return map[string]any{"ContinuousBackupsDescription": map[string]any{
		"ContinuousBackupsStatus":        "ENABLED",
		"PointInTimeRecoveryDescription": p,
	}}
}

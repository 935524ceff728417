package provision

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// LambdaControls are settings of both functions that organisations
// require: tracing, logging, the KMS key of the environment and the VPC.
type LambdaControls struct {
	// TracingMode is PassThrough (default) or Active (X-Ray).
	TracingMode string
	// LogFormat is Text (default) or JSON; the log levels need JSON.
	LogFormat string
	// ApplicationLogLevel (TRACE...FATAL) and SystemLogLevel (DEBUG, INFO,
	// WARN); with JSON, default INFO.
	ApplicationLogLevel string
	SystemLogLevel      string
	// KMSKeyARN encrypts the functions' environment with a customer
	// managed key; empty uses Lambda's key.
	KMSKeyARN string
	// SubnetIDs and SecurityGroupIDs attach both functions to a VPC; both
	// or neither.
	SubnetIDs        []string
	SecurityGroupIDs []string
}

// Defaults of LambdaControls.
const (
	DefaultTracingMode = "PassThrough"
	DefaultLogFormat   = "Text"
	DefaultLogLevel    = "INFO"
)

var (
	kmsKeyARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$`)
	subnetPattern    = regexp.MustCompile(`^subnet-[0-9a-f]+$`)
	securityGroupPat = regexp.MustCompile(`^sg-[0-9a-f]+$`)
)

// The values Lambda accepts for LambdaControls.
var (
	TracingModes         = []string{"PassThrough", "Active"}
	LogFormats           = []string{"Text", "JSON"}
	ApplicationLogLevels = []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}
	SystemLogLevels      = []string{"DEBUG", "INFO", "WARN"}
)

func (l LambdaControls) withDefaults() LambdaControls {
	l.TracingMode = cmp.Or(l.TracingMode, DefaultTracingMode)
	l.LogFormat = cmp.Or(l.LogFormat, DefaultLogFormat)
	if l.LogFormat == "JSON" {
		l.ApplicationLogLevel = cmp.Or(l.ApplicationLogLevel, DefaultLogLevel)
		l.SystemLogLevel = cmp.Or(l.SystemLogLevel, DefaultLogLevel)
	}
	return l
}

func (l LambdaControls) validate() error {
	switch {
	case !slices.Contains(TracingModes, l.TracingMode):
		return invalid("Controls.TracingMode", `use "PassThrough" or "Active"`, "is %q", l.TracingMode)
	case !slices.Contains(LogFormats, l.LogFormat):
		return invalid("Controls.LogFormat", `use "Text" or "JSON"`, "is %q", l.LogFormat)
	case l.LogFormat == "Text" && l.ApplicationLogLevel != "":
		return invalidAgainst("Controls.ApplicationLogLevel", []string{"Controls.LogFormat"}, `set the log format to "JSON": Lambda filters log levels only in JSON`, "is set with the Text log format")
	case l.LogFormat == "Text" && l.SystemLogLevel != "":
		return invalidAgainst("Controls.SystemLogLevel", []string{"Controls.LogFormat"}, `set the log format to "JSON": Lambda filters log levels only in JSON`, "is set with the Text log format")
	case l.ApplicationLogLevel != "" && !slices.Contains(ApplicationLogLevels, l.ApplicationLogLevel):
		return invalid("Controls.ApplicationLogLevel", fmt.Sprintf("use one of %v", ApplicationLogLevels), "is %q", l.ApplicationLogLevel)
	case l.SystemLogLevel != "" && !slices.Contains(SystemLogLevels, l.SystemLogLevel):
		return invalid("Controls.SystemLogLevel", fmt.Sprintf("use one of %v", SystemLogLevels), "is %q", l.SystemLogLevel)
	case l.KMSKeyARN != "" && !kmsKeyARNPattern.MatchString(l.KMSKeyARN):
		return invalid("Controls.KMSKeyARN", `use a KMS key ARN such as "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"`, "is %q", l.KMSKeyARN)
	case (len(l.SubnetIDs) == 0) != (len(l.SecurityGroupIDs) == 0):
		return invalid("Controls.SubnetIDs", "set both subnet_ids and security_group_ids, or neither", "has %d subnets and %d security groups", len(l.SubnetIDs), len(l.SecurityGroupIDs))
	case len(l.SubnetIDs) > 16 || len(l.SecurityGroupIDs) > 5:
		return invalid("Controls.SubnetIDs", "use at most 16 subnets and 5 security groups", "has %d subnets and %d security groups", len(l.SubnetIDs), len(l.SecurityGroupIDs))
	}
	for _, id := range l.SubnetIDs {
		if !subnetPattern.MatchString(id) {
			return invalid("Controls.SubnetIDs", `use subnet ids such as "subnet-0123456789abcdef0"`, "has %q", id)
		}
	}
	for _, id := range l.SecurityGroupIDs {
		if !securityGroupPat.MatchString(id) {
			return invalid("Controls.SecurityGroupIDs", `use security group ids such as "sg-0123456789abcdef0"`, "has %q", id)
		}
	}
	return nil
}

// controlStatements are what the roles need for the controls: network
// interfaces in the VPC, X-Ray segments, the environment's key.
func (l LambdaControls) controlStatements(a Account) []Statement {
	var out []Statement
	if len(l.SubnetIDs) > 0 {
		out = append(out, l.vpcStatements(a)...)
	}
	if l.TracingMode == "Active" {
		out = append(out, allow("WriteTraces", []string{"xray:PutTelemetryRecords", "xray:PutTraceSegments"}, "*"))
	}
	if l.KMSKeyARN != "" {
		out = append(out, allow("DecryptEnvironment", []string{"kms:Decrypt"}, l.KMSKeyARN))
	}
	return out
}

// vpcStatements let Lambda manage the functions' network interfaces with
// their roles, as AWSLambdaVPCAccessExecutionRole does, scoped to the
// pipeline's account and region: an interface is created in the
// configured subnets with the configured security groups, and only
// interfaces are deleted or get addresses. DescribeNetworkInterfaces has
// no resource type and needs "*" ("Giving Lambda functions access to
// resources in an Amazon VPC", Lambda developer guide; "Actions,
// resources, and condition keys for Amazon EC2", Service Authorization
// Reference).
func (l LambdaControls) vpcStatements(a Account) []Statement {
	interfaces := a.arn("ec2", "network-interface/*")
	create := []string{interfaces}
	for _, id := range l.SubnetIDs {
		create = append(create, a.arn("ec2", "subnet/"+id))
	}
	for _, id := range l.SecurityGroupIDs {
		create = append(create, a.arn("ec2", "security-group/"+id))
	}
	return []Statement{
		allow("CreateVPCNetworkInterfaces", []string{"ec2:CreateNetworkInterface"}, create...),
		allow("ManageVPCNetworkInterfaces", []string{"ec2:AssignPrivateIpAddresses", "ec2:DeleteNetworkInterface", "ec2:UnassignPrivateIpAddresses"}, interfaces),
		allow("DescribeVPCNetworkInterfaces", []string{"ec2:DescribeNetworkInterfaces"}, "*"),
	}
}

// requests are the parts of CreateFunction and UpdateFunctionConfiguration
// that set the controls. Empty values remove a key or a VPC attachment.
func (l LambdaControls) requests() (*types.TracingConfig, *types.LoggingConfig, *string, *types.VpcConfig) {
	logging := &types.LoggingConfig{LogFormat: types.LogFormat(l.LogFormat)}
	if l.LogFormat == "JSON" {
		logging.ApplicationLogLevel = types.ApplicationLogLevel(l.ApplicationLogLevel)
		logging.SystemLogLevel = types.SystemLogLevel(l.SystemLogLevel)
	}
	vpc := &types.VpcConfig{SubnetIds: slices.Clone(l.SubnetIDs), SecurityGroupIds: slices.Clone(l.SecurityGroupIDs)}
	if vpc.SubnetIds == nil {
		vpc.SubnetIds, vpc.SecurityGroupIds = []string{}, []string{}
	}
	return &types.TracingConfig{Mode: types.TracingMode(l.TracingMode)}, logging, aws.String(l.KMSKeyARN), vpc
}

// controlsDiff lists the controls that differ from the function's.
func controlsDiff(l LambdaControls, cfg *types.FunctionConfiguration) []string {
	var diff awsops.Fields
	add := diff.Add
	mode := ""
	if cfg.TracingConfig != nil {
		mode = string(cfg.TracingConfig.Mode)
	}
	add(mode != l.TracingMode && (mode != "" || l.TracingMode != DefaultTracingMode), "tracing_mode")
	var lc types.LoggingConfig
	if cfg.LoggingConfig != nil {
		lc = *cfg.LoggingConfig
	}
	add(string(lc.LogFormat) != l.LogFormat && (lc.LogFormat != "" || l.LogFormat != DefaultLogFormat), "logging")
	add(l.LogFormat == "JSON" && (string(lc.ApplicationLogLevel) != l.ApplicationLogLevel || string(lc.SystemLogLevel) != l.SystemLogLevel), "logging")
	add(aws.ToString(cfg.KMSKeyArn) != l.KMSKeyARN, "kms_key_arn")
	var subnets, groups []string
	if cfg.VpcConfig != nil {
		subnets, groups = cfg.VpcConfig.SubnetIds, cfg.VpcConfig.SecurityGroupIds
	}
	add(!sameSet(subnets, l.SubnetIDs) || !sameSet(groups, l.SecurityGroupIDs), "vpc_config")
	return slices.Compact(diff)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// lookupControls reads the controls of a function, for import.
func lookupControls(out *lambda.GetFunctionOutput) LambdaControls {
	var l LambdaControls
	cfg := out.Configuration
	if cfg.TracingConfig != nil {
		l.TracingMode = string(cfg.TracingConfig.Mode)
	}
	if lc := cfg.LoggingConfig; lc != nil {
		l.LogFormat = string(lc.LogFormat)
		if l.LogFormat == "JSON" {
			l.ApplicationLogLevel, l.SystemLogLevel = string(lc.ApplicationLogLevel), string(lc.SystemLogLevel)
		}
	}
	l.KMSKeyARN = aws.ToString(cfg.KMSKeyArn)
	if v := cfg.VpcConfig; v != nil && len(v.SubnetIds) > 0 {
		l.SubnetIDs, l.SecurityGroupIDs = v.SubnetIds, v.SecurityGroupIds
	}
	return l.withDefaults()
}

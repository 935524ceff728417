package lambda

import (
	"regexp"
	"slices"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// controls are the settings of a function that teams require and that the
// stack stores, returns and checks as Lambda does: tracing, log levels, the
// KMS key of the environment and the VPC attachment.
type controls struct {
	TracingMode         string
	ApplicationLogLevel string
	SystemLogLevel      string
	KMSKeyArn           string
	SubnetIDs           []string
	SecurityGroupIDs    []string
}

type tracingConfig struct {
	Mode string `json:"Mode"`
}

type vpcConfig struct {
	SubnetIds        []string `json:"SubnetIds"`
	SecurityGroupIds []string `json:"SecurityGroupIds"`
}

type vpcConfigOutput struct {
	SubnetIds        []string `json:"SubnetIds"`
	SecurityGroupIds []string `json:"SecurityGroupIds"`
	VpcId            string   `json:"VpcId,omitempty"`
}

// controlsInput are the request fields of CreateFunction and
// UpdateFunctionConfiguration that set controls.
type controlsInput struct {
	TracingConfig *tracingConfig `json:"TracingConfig"`
	KMSKeyArn     *string        `json:"KMSKeyArn"`
	VpcConfig     *vpcConfig     `json:"VpcConfig"`
}

var (
	kmsKeyArnRe = regexp.MustCompile(`^(arn:(aws[a-zA-Z-]*)?:[a-z0-9-.]+:.*)|()$`)
	subnetRe    = regexp.MustCompile(`^subnet-[0-9a-z]+$`)
	sgRe        = regexp.MustCompile(`^sg-[0-9a-z]+$`)
	logLevels   = map[string][]string{
		"ApplicationLogLevel": {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"},
		"SystemLogLevel":      {"DEBUG", "INFO", "WARN"},
	}
)

func (c controls) tracingMode() string {
	if c.TracingMode == "" {
		return "PassThrough"
	}
	return c.TracingMode
}

func (c controls) vpcOutput() *vpcConfigOutput {
	if len(c.SubnetIDs) == 0 {
		return nil
	}
	// The stack has no EC2: the VPC is named after the first subnet.
	return &vpcConfigOutput{SubnetIds: slices.Clone(c.SubnetIDs), SecurityGroupIds: slices.Clone(c.SecurityGroupIDs), VpcId: "vpc-" + c.SubnetIDs[0][len("subnet-"):]}
}

// apply returns c with the request's settings, checked as Lambda checks
// them. logFormat is the function's log format after the request: log
// levels need JSON.
func (c controls) apply(in controlsInput, logging *loggingConfig, logFormat string) (controls, *awsapi.Error) {
	if t := in.TracingConfig; t != nil {
		switch t.Mode {
		case "Active", "PassThrough":
			c.TracingMode = t.Mode
		default:
			return c, awsapi.ValidationException("1 validation error detected: Value '%s' at 'tracingConfig.mode' failed to satisfy constraint: Member must satisfy enum value set: [Active, PassThrough]", t.Mode)
		}
	}
	if k := in.KMSKeyArn; k != nil {
		if !kmsKeyArnRe.MatchString(*k) {
			return c, awsapi.ValidationException("1 validation error detected: Value '%s' at 'kMSKeyArn' failed to satisfy constraint: Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:[a-z0-9-.]+:.*)|()", *k)
		}
		c.KMSKeyArn = *k
	}
	if v := in.VpcConfig; v != nil {
		if len(v.SubnetIds) > 16 || len(v.SecurityGroupIds) > 5 {
			return c, invalidParameter("A VPC configuration takes at most 16 subnets and 5 security groups.")
		}
		for _, id := range v.SubnetIds {
			if !subnetRe.MatchString(id) {
				return c, invalidParameter("Error occurred while DescribeSubnets. EC2 Error Code: InvalidSubnetID.NotFound. EC2 Error Message: The subnet ID '%s' does not exist", id)
			}
		}
		for _, id := range v.SecurityGroupIds {
			if !sgRe.MatchString(id) {
				return c, invalidParameter("Error occurred while DescribeSecurityGroups. EC2 Error Code: InvalidGroup.NotFound. EC2 Error Message: The security group '%s' does not exist", id)
			}
		}
		if (len(v.SubnetIds) == 0) != (len(v.SecurityGroupIds) == 0) {
			return c, invalidParameter("A VPC configuration needs both subnets and security groups, or neither.")
		}
		c.SubnetIDs, c.SecurityGroupIDs = slices.Clone(v.SubnetIds), slices.Clone(v.SecurityGroupIds)
	}
	if logging != nil {
		for field, value := range map[string]string{"ApplicationLogLevel": logging.ApplicationLogLevel, "SystemLogLevel": logging.SystemLogLevel} {
			if value != "" && !slices.Contains(logLevels[field], value) {
				return c, awsapi.ValidationException("1 validation error detected: Value '%s' at 'loggingConfig.%s' failed to satisfy constraint: Member must satisfy enum value set: %v", value, field, logLevels[field])
			}
		}
		c.ApplicationLogLevel, c.SystemLogLevel = logging.ApplicationLogLevel, logging.SystemLogLevel
	}
	if logFormat != "JSON" {
		if c.ApplicationLogLevel != "" || c.SystemLogLevel != "" {
			return c, invalidParameter("ApplicationLogLevel and SystemLogLevel require the JSON log format.")
		}
	} else {
		// Lambda's defaults with the JSON format.
		if c.ApplicationLogLevel == "" {
			c.ApplicationLogLevel = "INFO"
		}
		if c.SystemLogLevel == "" {
			c.SystemLogLevel = "INFO"
		}
	}
	return c, nil
}

// vpcAccess is what an execution role needs for Lambda to attach the
// function to a VPC (the AWSLambdaVPCAccessExecutionRole policy's EC2
// actions), each on the resources EC2 authorises it on: an interface is
// created in a subnet with security groups, deleted as an interface, and
// described with no resource ("Actions, resources, and condition keys for
// Amazon EC2", Service Authorization Reference).
func (s *Service) vpcAccess(c controls) []vpcCheck {
	interfaces := s.env.ARN("ec2", "network-interface/*")
	create := []string{interfaces}
	for _, id := range c.SubnetIDs {
		create = append(create, s.env.ARN("ec2", "subnet/"+id))
	}
	for _, id := range c.SecurityGroupIDs {
		create = append(create, s.env.ARN("ec2", "security-group/"+id))
	}
	return []vpcCheck{
		{"ec2:CreateNetworkInterface", create},
		{"ec2:DescribeNetworkInterfaces", []string{"*"}},
		{"ec2:DeleteNetworkInterface", []string{interfaces}},
	}
}

// vpcCheck is an action and the resources it must be allowed on.
type vpcCheck struct {
	action    string
	resources []string
}

// checkControls refuses, as Lambda does, a VPC attachment whose execution
// role may not manage network interfaces.
func (s *Service) checkControls(role string, c controls) error {
	if len(c.SubnetIDs) == 0 || s.opts.Permissions == nil {
		return nil
	}
	pc := s.opts.Permissions()
	if pc == nil {
		return nil
	}
	for _, check := range s.vpcAccess(c) {
		for _, r := range check.resources {
			if !pc.RoleAllows(role, check.action, r) {
				return invalidParameter("The provided execution role does not have permissions to call %s on EC2", check.action[len("ec2:"):])
			}
		}
	}
	return nil
}

// setControls applies the controls an input asks for to cfg's, checked
// with cfg's role and log format.
func (s *Service) setControls(cfg *config, in controlsInput, logging *loggingConfig) error {
	ctl, err := cfg.apply(in, logging, cfg.LogFormat)
	if err != nil {
		return err
	}
	if err := s.checkControls(cfg.Role, ctl); err != nil {
		return err
	}
	cfg.controls = ctl
	return nil
}

// Package awsclient turns provider settings into an aws.Config, the way the
// hashicorp/aws provider reads its own: explicit settings first, then the
// standard AWS environment variables and shared files (AWS_REGION,
// AWS_PROFILE, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>, ...).
package awsclient

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Endpoint names accepted in Settings.Endpoints, with the SDK service ids
// they apply to.
var endpointServices = map[string]string{
	"cloudwatch":      "CloudWatch",
	"dynamodb":        "DynamoDB",
	"dynamodbstreams": "DynamoDB Streams",
	"events":          "EventBridge",
	"iam":             "IAM",
	"lambda":          "Lambda",
	"logs":            "CloudWatch Logs",
	"scheduler":       "Scheduler",
	"sns":             "SNS",
	"sqs":             "SQS",
	"sts":             "STS",
}

// EndpointNames returns the service names Settings.Endpoints accepts, sorted.
func EndpointNames() []string {
	names := make([]string, 0, len(endpointServices))
	for n := range endpointServices {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AssumeRole is a role to assume with the base credentials.
type AssumeRole struct {
	RoleARN     string
	SessionName string
	ExternalID  string
}

// Settings are the provider's AWS settings. Empty fields fall back to the
// SDK's default chain.
type Settings struct {
	Region                 string
	Profile                string
	SharedConfigFiles      []string
	SharedCredentialsFiles []string
	AssumeRole             *AssumeRole
	// EndpointURL is one base URL for every service, for local stacks.
	EndpointURL string
	// Endpoints overrides the URL per service (keys from EndpointNames).
	Endpoints                 map[string]string
	SkipCredentialsValidation bool
	// UserAgent is appended to the SDK's user agent ("terraform-provider-outbox/1.0.0").
	UserAgent string
}

// Identity is the caller, as STS reports it.
type Identity struct {
	AccountID string
	ARN       string
}

// Load resolves the settings into an aws.Config and, unless skipped, checks
// the credentials once with STS GetCallerIdentity.
func Load(ctx context.Context, s Settings) (aws.Config, Identity, error) {
	if err := s.validate(); err != nil {
		return aws.Config{}, Identity{}, err
	}
	opts := []func(*config.LoadOptions) error{}
	if s.Region != "" {
		opts = append(opts, config.WithRegion(s.Region))
	}
	if s.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.Profile))
	}
	if len(s.SharedConfigFiles) > 0 {
		opts = append(opts, config.WithSharedConfigFiles(s.SharedConfigFiles))
	}
	if len(s.SharedCredentialsFiles) > 0 {
		opts = append(opts, config.WithSharedCredentialsFiles(s.SharedCredentialsFiles))
	}
	if s.EndpointURL != "" {
		opts = append(opts, config.WithBaseEndpoint(s.EndpointURL))
	}
	if s.UserAgent != "" {
		opts = append(opts, config.WithAppID(strings.ReplaceAll(s.UserAgent, "/", "_")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, Identity{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, Identity{}, errors.New("no AWS region is set: set region in the provider block, or AWS_REGION in the environment, or region in the profile")
	}
	if len(s.Endpoints) > 0 {
		cfg.ServiceOptions = append(cfg.ServiceOptions, endpointOverrides(s.Endpoints))
	}
	if ar := s.AssumeRole; ar != nil && ar.RoleARN != "" {
		provider := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), ar.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			if ar.SessionName != "" {
				o.RoleSessionName = ar.SessionName
			}
			if ar.ExternalID != "" {
				o.ExternalID = aws.String(ar.ExternalID)
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(provider)
	}
	if s.SkipCredentialsValidation {
		return cfg, Identity{}, nil
	}
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return aws.Config{}, Identity{}, fmt.Errorf("validating AWS credentials with STS GetCallerIdentity: %w (check the profile, the environment's AWS_* variables or assume_role; set skip_credentials_validation = true only for endpoints without STS)", err)
	}
	return cfg, Identity{AccountID: aws.ToString(out.Account), ARN: aws.ToString(out.Arn)}, nil
}

func (s Settings) validate() error {
	if s.EndpointURL != "" {
		if err := checkURL(s.EndpointURL); err != nil {
			return fmt.Errorf("endpoint_url %w", err)
		}
	}
	for name, u := range s.Endpoints {
		if _, ok := endpointServices[name]; !ok {
			return fmt.Errorf("endpoints: %q is not a known service: use one of %s", name, strings.Join(EndpointNames(), ", "))
		}
		if err := checkURL(u); err != nil {
			return fmt.Errorf("endpoints.%s %w", name, err)
		}
	}
	if ar := s.AssumeRole; ar != nil && ar.RoleARN != "" && !strings.HasPrefix(ar.RoleARN, "arn:") {
		return fmt.Errorf("assume_role.role_arn %q is not an ARN: use arn:aws:iam::ACCOUNT:role/NAME", ar.RoleARN)
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL: use a form like http://127.0.0.1:4566", raw)
	}
	return nil
}

// endpointOverrides sets BaseEndpoint on the clients of the named services.
// Every generated aws-sdk-go-v2 client's Options has a BaseEndpoint *string
// field; setting it by reflection avoids importing every service here.
func endpointOverrides(endpoints map[string]string) func(string, any) {
	byServiceID := map[string]string{}
	for name, u := range endpoints {
		byServiceID[endpointServices[name]] = u
	}
	return func(serviceID string, options any) {
		u, ok := byServiceID[serviceID]
		if !ok {
			return
		}
		v := reflect.ValueOf(options)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return
		}
		if f := v.Elem().FieldByName("BaseEndpoint"); f.IsValid() && f.CanSet() && f.Type() == reflect.TypeFor[*string]() {
			f.Set(reflect.ValueOf(aws.String(u)))
		}
	}
}

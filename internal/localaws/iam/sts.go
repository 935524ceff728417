package iam

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// STS is the Security Token Service, sharing the roles of its IAM.
type STS struct {
	iam *Service
	ops awsapi.Operations
}

// STS returns the STS service backed by this IAM.
func (s *Service) STS() *STS {
	t := &STS{iam: s}
	t.ops = awsapi.Operations{
		"GetCallerIdentity": {Handle: t.getCallerIdentity},
		"AssumeRole":        {Handle: awsapi.FromForm(t.assumeRole)},
	}
	return t
}

// Spec implements awsapi.Service.
func (t *STS) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "sts", Protocol: awsapi.Query, SigningName: "sts", XMLNamespace: "https://sts.amazonaws.com/doc/2011-06-15/"}
}

var sessionNameRE = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

// Handle implements awsapi.Service.
func (t *STS) Handle(req *awsapi.Request) (any, error) { return t.ops.Handle(req) }

// getCallerIdentity needs no permission.
func (t *STS) getCallerIdentity(req *awsapi.Request) (any, error) {
	p := req.Principal
	userID := req.AccountID
	if !p.Admin {
		userID = t.iam.roleID(p.RoleArn) + ":" + p.SessionName
	}
	return struct {
		Arn     string `xml:"Arn"`
		UserID  string `xml:"UserId"`
		Account string `xml:"Account"`
	}{p.ARN, userID, req.AccountID}, nil
}

// roleID returns the unique id of a role, or a stable placeholder for a
// role the stack does not hold.
func (s *Service) roleID(arn string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.roleByARN(arn); r != nil {
		return r.id
	}
	return "AROA" + strings.Repeat("A", 17)
}

func (t *STS) assumeRole(req *awsapi.Request, f url.Values) (any, error) {
	roleArn, session := f.Get("RoleArn"), f.Get("RoleSessionName")
	if roleArn == "" {
		return nil, validationError("1 validation error detected: Value null at 'roleArn' failed to satisfy constraint: Member must not be null")
	}
	if !sessionNameRE.MatchString(session) {
		return nil, validationError("1 validation error detected: Value '%s' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*", session)
	}
	seconds, ok := awsapi.IntParam(f, "DurationSeconds", int(time.Hour/time.Second), 900, 43200)
	if !ok {
		return nil, validationError("1 validation error detected: Value '%s' at 'durationSeconds' failed to satisfy constraint: Member must have value greater than or equal to 900", f.Get("DurationSeconds"))
	}
	duration := time.Duration(seconds) * time.Second
	denied := awsapi.AccessDenied("User: %s is not authorized to perform: sts:AssumeRole on resource: %s", req.Principal.ARN, roleArn)
	s := t.iam
	s.mu.RLock()
	r := s.roleByARN(roleArn)
	var trust []string
	var id string
	maxSession := 0
	if r != nil {
		trust, _ = effective(r.trustSnapshots, s.now(), s.opts.PropagationDelay)
		id, maxSession = r.id, r.maxSession
	}
	s.mu.RUnlock()
	if len(trust) != 1 || iampolicy.EvaluateResource(trust[0], iampolicy.Request{Action: "sts:AssumeRole", Resource: roleArn, PrincipalArn: req.Principal.ARN}) != iampolicy.Allow {
		return nil, denied
	}
	if !req.Principal.Admin && s.Authorize(req.Principal, "sts:AssumeRole", roleArn) != nil {
		return nil, denied
	}
	if duration > time.Duration(maxSession)*time.Second {
		return nil, validationError("The requested DurationSeconds exceeds the MaxSessionDuration set for this role.")
	}
	rs := req.Env.Credentials.IssueRoleSession(roleArn, session, duration)
	type creds struct {
		AccessKeyID     string `xml:"AccessKeyId"`
		SecretAccessKey string `xml:"SecretAccessKey"`
		SessionToken    string `xml:"SessionToken"`
		Expiration      string `xml:"Expiration"`
	}
	type user struct {
		AssumedRoleID string `xml:"AssumedRoleId"`
		Arn           string `xml:"Arn"`
	}
	return struct {
		Credentials     creds `xml:"Credentials"`
		AssumedRoleUser user  `xml:"AssumedRoleUser"`
	}{
		creds{rs.AccessKeyID, rs.SecretAccessKey, rs.SessionToken, rs.Expiration.UTC().Format(timeFormat)},
		user{id + ":" + session, rs.ARN},
	}, nil
}

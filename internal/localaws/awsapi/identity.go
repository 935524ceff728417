package awsapi

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Principal is the caller of a request.
type Principal struct {
	// AccessKeyID is the key the request was signed with ("" when
	// unsigned).
	AccessKeyID string
	// Admin is true for keys the stack did not issue: unrestricted.
	Admin bool
	// RoleArn is the role of a role session (arn:aws:iam::acct:role/path/name).
	RoleArn string
	// SessionName is the role session name.
	SessionName string
	// ARN is the principal's ARN: arn:aws:sts::acct:assumed-role/name/session
	// for a role session, arn:aws:iam::acct:root for administrators.
	ARN string
	// Expiration is when a role session's credentials expire.
	Expiration time.Time
}

// Authorizer decides whether a principal may perform an action on a
// resource. The IAM service implements it. It returns nil to allow, or an
// error (an *Error is written as is; any other error becomes
// AccessDeniedException).
type Authorizer interface {
	Authorize(p Principal, action, resourceArn string) error
}

// ContextAuthorizer is an Authorizer that also evaluates the conditions of
// identity-based policies on the request's own condition keys (s3:prefix),
// given by lower-case name. The IAM service implements it.
type ContextAuthorizer interface {
	AuthorizeContext(p Principal, action, resourceArn string, keys map[string]string) error
}

// RoleSession are temporary credentials issued for a role.
type RoleSession struct {
	Principal
	SecretAccessKey string
	SessionToken    string
}

// Credentials is the registry of temporary credentials issued by the stack.
type Credentials struct {
	env *Env

	mu       sync.RWMutex
	sessions map[string]RoleSession
}

// DefaultSessionDuration is how long issued credentials are valid.
const DefaultSessionDuration = time.Hour

// NewCredentials returns an empty registry.
func NewCredentials(env *Env) *Credentials {
	return &Credentials{env: env, sessions: map[string]RoleSession{}}
}

// IssueRoleCredentials issues temporary credentials for a role, valid for
// DefaultSessionDuration, with a generated session name.
func (c *Credentials) IssueRoleCredentials(roleArn string) (akid, secret, token string) {
	s := c.IssueRoleSession(roleArn, "localaws-"+randomID(6), DefaultSessionDuration)
	return s.AccessKeyID, s.SecretAccessKey, s.SessionToken
}

// IssueRoleSession issues temporary credentials for a role with a session
// name and a lifetime (0 means DefaultSessionDuration). STS AssumeRole uses
// it.
func (c *Credentials) IssueRoleSession(roleArn, sessionName string, lifetime time.Duration) RoleSession {
	if lifetime <= 0 {
		lifetime = DefaultSessionDuration
	}
	p := c.env.RolePrincipal(roleArn, sessionName)
	p.AccessKeyID = "ASIA" + strings.ToUpper(randomID(8))
	p.Expiration = c.env.Time().Add(lifetime).UTC().Truncate(time.Second)
	s := RoleSession{Principal: p, SecretAccessKey: randomB64(30), SessionToken: randomB64(96)}
	c.mu.Lock()
	c.sessions[s.AccessKeyID] = s
	c.mu.Unlock()
	return s
}

// RolePrincipal is the principal of a session opened on a role, named
// arn:aws:sts::acct:assumed-role/name/session: what a service acts as when
// it assumes a resource's role.
func (e *Env) RolePrincipal(roleArn, sessionName string) Principal {
	roleName := roleArn
	if a, err := ParseARN(roleArn); err == nil {
		r := strings.TrimPrefix(a.Resource, "role/")
		if i := strings.LastIndex(r, "/"); i >= 0 {
			r = r[i+1:]
		}
		roleName = r
	}
	return Principal{
		RoleArn:     roleArn,
		SessionName: sessionName,
		ARN:         ARN("sts", "", e.AccountID, "assumed-role/"+roleName+"/"+sessionName),
	}
}

// AuthorizeAs checks that p, a principal a service acts as, may perform
// action on resource. It returns nil when allowed or when no authorizer is
// set, else the error a JSON service returns (see Request.Authorize).
func (e *Env) AuthorizeAs(p Principal, action, resourceArn string) error {
	return e.AuthorizeAsContext(p, action, resourceArn, nil)
}

// AuthorizeAsContext is AuthorizeAs with the request's condition keys (by
// lower-case name), as Request.AuthorizeContext takes them.
func (e *Env) AuthorizeAsContext(p Principal, action, resourceArn string, keys map[string]string) error {
	a := e.Authorizer()
	if a == nil {
		return nil
	}
	return denied(authorizeWith(a, p, action, resourceArn, keys), p, action, resourceArn, false)
}

// authorizeWith asks a whether p may perform action on resourceArn, with
// the condition keys when a evaluates them.
func authorizeWith(a Authorizer, p Principal, action, resourceArn string, keys map[string]string) error {
	if ca, ok := a.(ContextAuthorizer); ok && len(keys) > 0 {
		return ca.AuthorizeContext(p, action, resourceArn, keys)
	}
	return a.Authorize(p, action, resourceArn)
}

// Lookup returns the role session of an issued access key id.
func (c *Credentials) Lookup(akid string) (RoleSession, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.sessions[akid]
	return s, ok
}

// Revoke forgets an issued access key id.
func (c *Credentials) Revoke(akid string) {
	c.mu.Lock()
	delete(c.sessions, akid)
	c.mu.Unlock()
}

// Resolve maps an access key id to its principal: an issued key gives its
// role session (ExpiredTokenException once expired), any other key an
// administrator.
func (c *Credentials) Resolve(akid string) (Principal, *Error) {
	if s, ok := c.Lookup(akid); ok {
		if !s.Expiration.IsZero() && c.env.Time().After(s.Expiration) {
			return Principal{}, ExpiredTokenException()
		}
		return s.Principal, nil
	}
	return Principal{AccessKeyID: akid, Admin: true, ARN: ARN("iam", "", c.env.AccountID, "root")}, nil
}

// CredentialScope extracts the access key id, region and signing service
// from a SigV4 Authorization header or presigned query (X-Amz-Credential).
// It does not verify signatures.
func CredentialScope(r *http.Request) (akid, region, service string) {
	cred := ""
	if h := r.Header.Get("Authorization"); h != "" {
		if i := strings.Index(h, "Credential="); i >= 0 {
			cred = h[i+len("Credential="):]
			if j := strings.IndexAny(cred, ", "); j >= 0 {
				cred = cred[:j]
			}
		}
	} else if q := r.URL.Query().Get("X-Amz-Credential"); q != "" {
		cred = q
	}
	if cred == "" {
		return "", "", ""
	}
	parts := strings.Split(cred, "/")
	akid = parts[0]
	if len(parts) >= 5 {
		region, service = parts[2], parts[3]
	}
	return akid, region, service
}

func randomID(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// RandomHex returns n random bytes in hex: ids such as a stream record's
// EventID or a log stream's suffix.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randomB64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// NewRequestID returns a random UUID-shaped request id.
func NewRequestID() string {
	return NewUUID()
}

// NewUUID returns a random version 4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 36)
	j := 0
	for i, v := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hex[v>>4], hex[v&0x0f]
		j += 2
	}
	return string(out)
}

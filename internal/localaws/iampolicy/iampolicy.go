// Package iampolicy parses IAM policy documents and evaluates them the way
// AWS does for a single account: an explicit Deny in any applicable
// statement wins, otherwise an Allow grants, otherwise the request is
// implicitly denied.
//
// Identity-based policies (attached to a role) are evaluated with Evaluate;
// resource-based policies (SQS queue policies, SNS topic policies, Lambda
// function policies, role trust policies) with EvaluateResource, which also
// matches each statement's Principal against the caller.
//
// Supported elements: Version, Statement (object or list), Sid, Effect,
// Action/NotAction, Resource/NotResource, Principal/NotPrincipal ("*",
// {"AWS": …}, {"Service": …}, {"Federated": …}) and Condition with the
// String*, Arn*, Numeric*, Date*, Bool, BinaryEquals, IpAddress,
// NotIpAddress and Null operators, their IfExists forms and their
// ForAnyValue: and ForAllValues: set forms, on the keys aws:SourceArn,
// aws:SourceAccount, aws:PrincipalArn, aws:PrincipalAccount,
// aws:PrincipalServiceName and aws:PrincipalType and on the request's own
// keys (Request.Context, and Request.Sets for multivalued keys).
// Actions match case-insensitively, resources case-sensitively, both with
// the * and ? wildcards.
package iampolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Decision is the outcome of evaluating policies for one request.
type Decision int

// The decisions, in increasing precedence.
const (
	// NotAllowed is the implicit deny: no statement allows the request.
	NotAllowed Decision = iota
	// Allow means a statement allows the request and none denies it.
	Allow
	// Deny is an explicit deny by a statement.
	Deny
)

// String names the decision.
func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return "NotAllowed"
}

// Request is the request context a policy is evaluated against.
type Request struct {
	// Action is the IAM action ("dynamodb:PutItem").
	Action string
	// Resource is the ARN of the resource acted upon.
	Resource string
	// PrincipalArn is the caller's ARN: a role
	// (arn:aws:iam::123456789012:role/R), a role session
	// (arn:aws:sts::123456789012:assumed-role/R/S) or an account root.
	PrincipalArn string
	// PrincipalService is the calling AWS service principal
	// ("lambda.amazonaws.com") when a service acts.
	PrincipalService string
	// SourceArn and SourceAccount are the aws:SourceArn and
	// aws:SourceAccount context keys of a service acting on behalf of a
	// resource.
	SourceArn     string
	SourceAccount string
	// Context holds further condition keys of the request, by lower-case
	// name ("aws:securetransport", "s3:x-amz-server-side-encryption").
	Context map[string]string
	// Sets holds the request's multivalued condition keys, by lower-case
	// name ("kms:resourcealiases"), for the ForAnyValue and ForAllValues
	// set operators. A key present with no values is an empty set.
	Sets map[string][]string
}

// Policy is a parsed policy document.
type Policy struct {
	Version    string
	ID         string
	Statements []Statement
}

// Statement is one statement of a policy.
type Statement struct {
	Sid    string
	Effect string
	// Action and NotAction: exactly one is set.
	Action, NotAction []string
	// Resource and NotResource: at most one is set (neither in trust
	// policies).
	Resource, NotResource []string
	HasResource           bool
	// Principal and NotPrincipal: nil when absent.
	Principal, NotPrincipal *Principal
	// Condition maps an operator to keys to values.
	Condition map[string]map[string][]string
}

// Principal is a Principal element. Any is "*".
type Principal struct {
	Any       bool
	AWS       []string
	Service   []string
	Federated []string
}

// Parse parses a policy document and checks its grammar.
func Parse(doc string) (*Policy, error) {
	var raw struct {
		Version   string          `json:"Version"`
		ID        string          `json:"Id"`
		Statement json.RawMessage `json:"Statement"`
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("syntax errors in policy: %w", err)
	}
	if len(bytes.TrimSpace(raw.Statement)) == 0 || string(bytes.TrimSpace(raw.Statement)) == "null" {
		return nil, errors.New("policy document must contain a Statement")
	}
	var rawStmts []json.RawMessage
	if bytes.TrimSpace(raw.Statement)[0] == '[' {
		if err := json.Unmarshal(raw.Statement, &rawStmts); err != nil {
			return nil, fmt.Errorf("syntax errors in policy: %w", err)
		}
	} else {
		rawStmts = []json.RawMessage{raw.Statement}
	}
	p := &Policy{Version: raw.Version, ID: raw.ID}
	for i, rs := range rawStmts {
		st, err := parseStatement(rs)
		if err != nil {
			return nil, fmt.Errorf("statement %d: %w", i, err)
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

func parseStatement(b json.RawMessage) (Statement, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return Statement{}, fmt.Errorf("syntax errors in policy: %w", err)
	}
	var st Statement
	var err error
	for k, v := range m {
		switch k {
		case "Sid":
			err = json.Unmarshal(v, &st.Sid)
		case "Effect":
			err = json.Unmarshal(v, &st.Effect)
		case "Action":
			st.Action, err = stringList(v)
		case "NotAction":
			st.NotAction, err = stringList(v)
		case "Resource":
			st.Resource, err = stringList(v)
			st.HasResource = true
		case "NotResource":
			st.NotResource, err = stringList(v)
			st.HasResource = true
		case "Principal":
			st.Principal, err = parsePrincipal(v)
		case "NotPrincipal":
			st.NotPrincipal, err = parsePrincipal(v)
		case "Condition":
			st.Condition, err = parseCondition(v)
		default:
			return st, fmt.Errorf("unknown field %s", k)
		}
		if err != nil {
			return st, fmt.Errorf("%s: %w", k, err)
		}
	}
	if st.Effect != "Allow" && st.Effect != "Deny" {
		return st, fmt.Errorf("invalid effect: %q", st.Effect)
	}
	if (st.Action == nil) == (st.NotAction == nil) {
		return st, errors.New("policy statement must contain exactly one of Action or NotAction")
	}
	if st.Resource != nil && st.NotResource != nil {
		return st, errors.New("policy statement must not contain both Resource and NotResource")
	}
	if st.Principal != nil && st.NotPrincipal != nil {
		return st, errors.New("policy statement must not contain both Principal and NotPrincipal")
	}
	return st, nil
}

func stringList(v json.RawMessage) ([]string, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '[' {
		var l []string
		if err := json.Unmarshal(v, &l); err != nil {
			return nil, err
		}
		if l == nil {
			l = []string{}
		}
		return l, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func parsePrincipal(v json.RawMessage) (*Principal, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		if s != "*" {
			return nil, fmt.Errorf("invalid principal %q", s)
		}
		return &Principal{Any: true}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, err
	}
	p := &Principal{}
	for k, raw := range m {
		l, err := stringList(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "AWS":
			p.AWS = l
		case "Service":
			p.Service = l
		case "Federated":
			p.Federated = l
		case "CanonicalUser":
		default:
			return nil, fmt.Errorf("invalid principal type %s", k)
		}
	}
	return p, nil
}

func parseCondition(v json.RawMessage) (map[string]map[string][]string, error) {
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, err
	}
	out := make(map[string]map[string][]string, len(m))
	for op, keys := range m {
		if !knownOperator(op) {
			return nil, fmt.Errorf("unsupported condition operator %s", op)
		}
		out[op] = make(map[string][]string, len(keys))
		for k, raw := range keys {
			var l []string
			raw = bytes.TrimSpace(raw)
			if len(raw) > 0 && raw[0] == '[' {
				var anys []any
				if err := json.Unmarshal(raw, &anys); err != nil {
					return nil, err
				}
				for _, a := range anys {
					l = append(l, fmt.Sprint(a))
				}
			} else {
				var a any
				if err := json.Unmarshal(raw, &a); err != nil {
					return nil, err
				}
				l = []string{fmt.Sprint(a)}
			}
			out[op][k] = l
		}
	}
	return out, nil
}

// Evaluate evaluates identity-based policies (the inline and managed
// policies of a role) for req. Principal elements are ignored. A document
// that does not parse contributes nothing.
func Evaluate(policies []string, req Request) Decision {
	d := NotAllowed
	for _, doc := range policies {
		p, err := parsed(doc)
		if err != nil {
			continue
		}
		if pd := p.evaluate(req, false); pd > d {
			d = pd
		}
		if d == Deny {
			return Deny
		}
	}
	return d
}

// EvaluateResource evaluates a resource-based policy for req: a statement
// applies only when its Principal matches the caller. A document that does
// not parse allows nothing.
func EvaluateResource(policyJSON string, req Request) Decision {
	p, err := parsed(policyJSON)
	if err != nil {
		return NotAllowed
	}
	return p.evaluate(req, true)
}

// parsedCache holds the documents Evaluate and EvaluateResource parsed:
// every authorised call evaluates the caller's policies, and a document's
// parse is the same each time (evaluation only reads it). It is emptied
// when it holds maxParsed documents, so that documents no longer in use
// do not accumulate.
var parsedCache struct {
	sync.Mutex
	docs map[string]parseResult
}

type parseResult struct {
	p   *Policy
	err error
}

const maxParsed = 1024

// parsed is Parse through parsedCache.
func parsed(doc string) (*Policy, error) {
	parsedCache.Lock()
	r, ok := parsedCache.docs[doc]
	parsedCache.Unlock()
	if ok {
		return r.p, r.err
	}
	p, err := Parse(doc)
	parsedCache.Lock()
	if parsedCache.docs == nil || len(parsedCache.docs) >= maxParsed {
		parsedCache.docs = map[string]parseResult{}
	}
	parsedCache.docs[doc] = parseResult{p, err}
	parsedCache.Unlock()
	return p, err
}

// Evaluate evaluates this policy for req; resource selects resource-based
// semantics (principals are matched).
func (p *Policy) Evaluate(req Request, resource bool) Decision {
	return p.evaluate(req, resource)
}

func (p *Policy) evaluate(req Request, resource bool) Decision {
	d := NotAllowed
	for i := range p.Statements {
		st := &p.Statements[i]
		if !st.applies(req, resource) {
			continue
		}
		if st.Effect == "Deny" {
			return Deny
		}
		d = Allow
	}
	return d
}

func (st *Statement) applies(req Request, resource bool) bool {
	if st.Action != nil && !anyMatch(st.Action, req.Action, actionMatch) {
		return false
	}
	if st.NotAction != nil && anyMatch(st.NotAction, req.Action, actionMatch) {
		return false
	}
	if st.Resource != nil && !anyMatch(st.Resource, req.Resource, Match) {
		return false
	}
	if st.NotResource != nil && anyMatch(st.NotResource, req.Resource, Match) {
		return false
	}
	if resource {
		if st.Principal != nil && !st.Principal.matches(req) {
			return false
		}
		if st.NotPrincipal != nil && st.NotPrincipal.matches(req) {
			return false
		}
		if st.Principal == nil && st.NotPrincipal == nil {
			return false
		}
	}
	return conditionsHold(st.Condition, req)
}

func anyMatch(patterns []string, value string, match func(pattern, value string) bool) bool {
	for _, p := range patterns {
		if match(p, value) {
			return true
		}
	}
	return false
}

// actionMatch matches an action pattern ("sqs:Send*") case-insensitively.
func actionMatch(pattern, action string) bool {
	return Match(strings.ToLower(pattern), strings.ToLower(action))
}

func (p *Principal) matches(req Request) bool {
	if p.Any {
		return true
	}
	if req.PrincipalService != "" && anyMatch(p.Service, req.PrincipalService, func(a, b string) bool { return a == b }) {
		return true
	}
	if req.PrincipalArn == "" {
		return false
	}
	for _, a := range p.AWS {
		if awsPrincipalMatches(a, req.PrincipalArn) {
			return true
		}
	}
	return false
}

// awsPrincipalMatches reports whether an AWS principal of a policy names
// the caller: "*", an account id or its root ARN (any principal of the
// account), a role ARN (the role itself and its sessions) or an exact ARN.
func awsPrincipalMatches(principal, caller string) bool {
	if principal == "*" || principal == caller {
		return true
	}
	callerAccount := arnAccount(caller)
	if principal == callerAccount && callerAccount != "" {
		return true
	}
	if principal == "arn:aws:iam::"+callerAccount+":root" && callerAccount != "" {
		return true
	}
	if role, ok := strings.CutPrefix(principal, "arn:aws:iam::"+callerAccount+":role/"); ok && callerAccount != "" {
		if i := strings.LastIndex(role, "/"); i >= 0 {
			role = role[i+1:]
		}
		if rest, ok := strings.CutPrefix(caller, "arn:aws:sts::"+callerAccount+":assumed-role/"); ok {
			name, _, _ := strings.Cut(rest, "/")
			return name == role
		}
		if rest, ok := strings.CutPrefix(caller, "arn:aws:iam::"+callerAccount+":role/"); ok {
			if i := strings.LastIndex(rest, "/"); i >= 0 {
				rest = rest[i+1:]
			}
			return rest == role
		}
	}
	return false
}

func arnAccount(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return ""
	}
	return parts[4]
}

// contextValues returns a condition key's values and whether it is
// present: a multivalued key's set (possibly empty), or a single-valued
// key's value. Keys are case-insensitive.
func contextValues(key string, req Request) ([]string, bool) {
	if set, ok := req.Sets[strings.ToLower(key)]; ok {
		return set, true
	}
	v, present := contextValue(key, req)
	if !present {
		return nil, false
	}
	return []string{v}, true
}

// contextValue returns a single-valued condition key's value and whether
// it is present.
func contextValue(key string, req Request) (string, bool) {
	var v string
	switch strings.ToLower(key) {
	case "aws:sourcearn":
		v = req.SourceArn
	case "aws:sourceaccount":
		v = req.SourceAccount
	case "aws:principalarn":
		v = principalArnKey(req.PrincipalArn)
	case "aws:principalaccount":
		v = arnAccount(req.PrincipalArn)
	case "aws:principalservicename":
		v = req.PrincipalService
	case "aws:principaltype":
		switch {
		case strings.Contains(req.PrincipalArn, ":assumed-role/"):
			v = "AssumedRole"
		case strings.HasSuffix(req.PrincipalArn, ":root"):
			v = "Account"
		case req.PrincipalArn != "":
			v = "User"
		}
	default:
		v = req.Context[strings.ToLower(key)]
	}
	return v, v != ""
}

// principalArnKey is aws:PrincipalArn: for a role session, the ARN of the
// role (without its path, which the session ARN does not carry).
func principalArnKey(arn string) string {
	if rest, ok := strings.CutPrefix(arn, "arn:aws:sts::"); ok {
		account, r, _ := strings.Cut(rest, ":")
		if role, ok := strings.CutPrefix(r, "assumed-role/"); ok {
			name, _, _ := strings.Cut(role, "/")
			return "arn:aws:iam::" + account + ":role/" + name
		}
	}
	return arn
}

// baseOperator is a condition operator on one value: match reports whether
// a request value matches one of the policy's values; negated operators
// hold when no policy value matches.
type baseOperator struct {
	negated bool
	match   func(pattern, value string) bool
}

var baseOperators = map[string]baseOperator{
	"StringEquals":              {false, func(p, v string) bool { return p == v }},
	"StringNotEquals":           {true, func(p, v string) bool { return p == v }},
	"StringEqualsIgnoreCase":    {false, strings.EqualFold},
	"StringNotEqualsIgnoreCase": {true, strings.EqualFold},
	"StringLike":                {false, Match},
	"StringNotLike":             {true, Match},
	"ArnEquals":                 {false, arnMatch},
	"ArnLike":                   {false, arnMatch},
	"ArnNotEquals":              {true, arnMatch},
	"ArnNotLike":                {true, arnMatch},
	"Bool":                      {false, strings.EqualFold},
	"BinaryEquals":              {false, func(p, v string) bool { return p == v }},
	"NumericEquals":             {false, numeric(func(c int) bool { return c == 0 })},
	"NumericNotEquals":          {true, numeric(func(c int) bool { return c == 0 })},
	"NumericLessThan":           {false, numeric(func(c int) bool { return c < 0 })},
	"NumericLessThanEquals":     {false, numeric(func(c int) bool { return c <= 0 })},
	"NumericGreaterThan":        {false, numeric(func(c int) bool { return c > 0 })},
	"NumericGreaterThanEquals":  {false, numeric(func(c int) bool { return c >= 0 })},
	"DateEquals":                {false, date(func(c int) bool { return c == 0 })},
	"DateNotEquals":             {true, date(func(c int) bool { return c == 0 })},
	"DateLessThan":              {false, date(func(c int) bool { return c < 0 })},
	"DateLessThanEquals":        {false, date(func(c int) bool { return c <= 0 })},
	"DateGreaterThan":           {false, date(func(c int) bool { return c > 0 })},
	"DateGreaterThanEquals":     {false, date(func(c int) bool { return c >= 0 })},
	"IpAddress":                 {false, ipMatch},
	"NotIpAddress":              {true, ipMatch},
}

// The set operator qualifiers, for multivalued context keys.
const (
	forAnyValue  = "ForAnyValue:"
	forAllValues = "ForAllValues:"
)

// splitOperator splits a condition operator into its set qualifier
// ("ForAnyValue:", "ForAllValues:" or ""), its base operator's name and
// whether it is an IfExists form.
func splitOperator(op string) (qualifier, name string, ifExists bool) {
	for _, q := range []string{forAnyValue, forAllValues} {
		if rest, found := strings.CutPrefix(op, q); found {
			qualifier, op = q, rest
		}
	}
	name, ifExists = strings.CutSuffix(op, "IfExists")
	return qualifier, name, ifExists
}

// knownOperator reports whether IAM knows op: a base operator or Null, in
// any of its forms.
func knownOperator(op string) bool {
	_, name, _ := splitOperator(op)
	_, ok := baseOperators[name]
	return ok || name == "Null"
}

func conditionsHold(cond map[string]map[string][]string, req Request) bool {
	for op, keys := range cond {
		for key, values := range keys {
			if !conditionHolds(op, key, values, req) {
				return false
			}
		}
	}
	return true
}

// conditionHolds evaluates one operator on one key as AWS documents
// (reference_policies_condition-single-vs-multi-valued-context-keys): a
// single-valued operator on a missing key holds only in its IfExists form
// or when negated; ForAnyValue holds when some request value satisfies the
// base operator, and so never for a missing key or an empty set, even in
// its IfExists form (as AWS answers: re:Post "ForAnyValue:StringEqualsIfExists
// behaving unexpectedly"); ForAllValues holds when every request value
// does, and so for a missing key or an empty set.
func conditionHolds(op, key string, values []string, req Request) bool {
	vals, present := contextValues(key, req)
	qualifier, name, ifExists := splitOperator(op)
	if name == "Null" {
		// Null tests the key's presence, whatever its form.
		for _, want := range values {
			if strings.EqualFold(want, "true") == !present {
				return true
			}
		}
		return false
	}
	o, ok := baseOperators[name]
	if !ok {
		return false
	}
	holds := func(v string) bool { return anyMatch(values, v, o.match) != o.negated }
	switch qualifier {
	case forAllValues:
		return !slices.ContainsFunc(vals, func(v string) bool { return !holds(v) })
	case forAnyValue:
		return slices.ContainsFunc(vals, holds)
	}
	if !present {
		return ifExists || o.negated
	}
	return slices.ContainsFunc(vals, holds)
}

// numeric is a Numeric* operator's match: cmp of the request value to the
// policy value; a value that is not a number matches nothing.
func numeric(cmp func(int) bool) func(pattern, value string) bool {
	return func(pattern, value string) bool {
		p, perr := strconv.ParseFloat(pattern, 64)
		v, verr := strconv.ParseFloat(value, 64)
		return perr == nil && verr == nil && cmp(compare(v, p))
	}
}

// date is a Date* operator's match on ISO 8601 dates or epoch seconds.
func date(cmp func(int) bool) func(pattern, value string) bool {
	return func(pattern, value string) bool {
		p, perr := parseDate(pattern)
		v, verr := parseDate(value)
		return perr == nil && verr == nil && cmp(v.Compare(p))
	}
}

func parseDate(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a date: %q", s)
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ipMatch matches an IP address against an address or a CIDR block.
func ipMatch(pattern, value string) bool {
	ip, err := netip.ParseAddr(value)
	if err != nil {
		return false
	}
	if prefix, err := netip.ParsePrefix(pattern); err == nil {
		return prefix.Contains(ip)
	}
	p, err := netip.ParseAddr(pattern)
	return err == nil && p == ip
}

// arnMatch matches an ARN against an ARN pattern component by component
// (ArnEquals and ArnLike both accept wildcards).
func arnMatch(pattern, arn string) bool {
	pp := strings.SplitN(pattern, ":", 6)
	ap := strings.SplitN(arn, ":", 6)
	if len(pp) != 6 || len(ap) != 6 {
		return Match(pattern, arn)
	}
	for i := range pp {
		if !Match(pp[i], ap[i]) {
			return false
		}
	}
	return true
}

// Match reports whether value matches pattern, where * matches any
// sequence of characters (including none) and ? any single character.
// The comparison is case-sensitive.
func Match(pattern, value string) bool {
	p, v := 0, 0
	star, mark := -1, 0
	for v < len(value) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == value[v]):
			p++
			v++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, v
			p++
		case star >= 0:
			p = star + 1
			mark++
			v = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

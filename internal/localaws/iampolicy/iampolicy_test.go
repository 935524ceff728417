package iampolicy_test

import (
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

const (
	roleSession = "arn:aws:sts::111122223333:assumed-role/relay/s1"
	queueArn    = "arn:aws:sqs:us-east-1:111122223333:dlq"
	tableArn    = "arn:aws:dynamodb:us-east-1:111122223333:table/orders"
	ruleArn     = "arn:aws:events:us-east-1:111122223333:rule/r1"
)

func TestEvaluateIdentity(t *testing.T) {
	t.Parallel()
	allowPut := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"dynamodb:PutItem","Resource":"` + tableArn + `"}}`
	allowAllDDB := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:*"],"Resource":"*"}]}`
	denyPut := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"dynamodb:putitem","Resource":"arn:aws:dynamodb:*:*:table/*"}]}`
	notAction := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":"dynamodb:Delete*","Resource":"*"}]}`
	notResource := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","NotResource":"arn:aws:dynamodb:us-east-1:111122223333:table/secret*"}]}`
	question := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"arn:aws:sqs:us-east-1:111122223333:dl?"}]}`
	logs := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["logs:CreateLogGroup","logs:CreateLogStream","logs:PutLogEvents"],"Resource":"*"}]}`
	srcCond := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"*","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:events:*:111122223333:rule/*"}}}]}`
	notEqCond := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"*","Resource":"*","Condition":{"StringNotEquals":{"aws:SourceAccount":["111122223333","444455556666"]}}}]}`
	ifExists := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ArnEqualsIfExists":{"aws:SourceArn":"` + ruleArn + `"}}}]}`
	principalArnCond := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:PrincipalArn":"arn:aws:iam::111122223333:role/relay"}}}]}`
	nullCond := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"Null":{"aws:SourceArn":"true"}}}]}`

	put := iampolicy.Request{Action: "dynamodb:PutItem", Resource: tableArn, PrincipalArn: roleSession}
	del := iampolicy.Request{Action: "dynamodb:DeleteItem", Resource: tableArn, PrincipalArn: roleSession}
	send := iampolicy.Request{Action: "sqs:SendMessage", Resource: queueArn, PrincipalArn: roleSession}
	sendFromRule := send
	sendFromRule.SourceArn = ruleArn
	sendFromRule.SourceAccount = "111122223333"
	sendFromOther := send
	sendFromOther.SourceArn = "arn:aws:events:us-east-1:999999999999:rule/x"
	sendFromOther.SourceAccount = "999999999999"

	checkDecisions(t, "Evaluate", iampolicy.Evaluate, []decision[[]string]{
		{"no policies", nil, put, iampolicy.NotAllowed},
		{"exact allow", []string{allowPut}, put, iampolicy.Allow},
		{"other action", []string{allowPut}, del, iampolicy.NotAllowed},
		{"other resource", []string{allowPut}, iampolicy.Request{Action: "dynamodb:PutItem", Resource: tableArn + "2"}, iampolicy.NotAllowed},
		{"case-insensitive action", []string{allowPut}, iampolicy.Request{Action: "DynamoDB:putitem", Resource: tableArn}, iampolicy.Allow},
		{"service wildcard", []string{allowAllDDB}, del, iampolicy.Allow},
		{"deny overrides allow", []string{allowAllDDB, denyPut}, put, iampolicy.Deny},
		{"deny first overrides allow", []string{denyPut, allowAllDDB}, put, iampolicy.Deny},
		{"deny of other action leaves allow", []string{allowAllDDB, denyPut}, del, iampolicy.Allow},
		{"not action allows others", []string{notAction}, put, iampolicy.Allow},
		{"not action excludes", []string{notAction}, del, iampolicy.NotAllowed},
		{"not resource allows others", []string{notResource}, put, iampolicy.Allow},
		{"not resource excludes", []string{notResource}, iampolicy.Request{Action: "dynamodb:GetItem", Resource: "arn:aws:dynamodb:us-east-1:111122223333:table/secrets"}, iampolicy.NotAllowed},
		{"question mark", []string{question}, send, iampolicy.Allow},
		{"question mark is one char", []string{question}, iampolicy.Request{Action: "sqs:SendMessage", Resource: queueArn + "2"}, iampolicy.NotAllowed},
		{"action list", []string{logs}, iampolicy.Request{Action: "logs:PutLogEvents", Resource: "arn:aws:logs:us-east-1:111122223333:log-group:/aws/lambda/f:*"}, iampolicy.Allow},
		{"malformed ignored", []string{`{"Statement":`, allowPut}, put, iampolicy.Allow},
		{"arnlike condition holds", []string{srcCond}, sendFromRule, iampolicy.Allow},
		{"arnlike condition fails", []string{srcCond}, sendFromOther, iampolicy.NotAllowed},
		{"arnlike condition key absent", []string{srcCond}, send, iampolicy.NotAllowed},
		{"negated multi-value matches none", []string{allowAllDDB, notEqCond}, iampolicy.Request{Action: "dynamodb:PutItem", Resource: tableArn, SourceAccount: "999999999999"}, iampolicy.Deny},
		{"negated multi-value matches one", []string{allowAllDDB, notEqCond}, iampolicy.Request{Action: "dynamodb:PutItem", Resource: tableArn, SourceAccount: "444455556666"}, iampolicy.Allow},
		{"negated with absent key holds", []string{allowAllDDB, notEqCond}, put, iampolicy.Deny},
		{"ifexists absent", []string{ifExists}, send, iampolicy.Allow},
		{"ifexists present match", []string{ifExists}, sendFromRule, iampolicy.Allow},
		{"ifexists present mismatch", []string{ifExists}, sendFromOther, iampolicy.NotAllowed},
		{"principal arn of session is role", []string{principalArnCond}, put, iampolicy.Allow},
		{"principal arn other role", []string{principalArnCond}, iampolicy.Request{Action: "x:y", Resource: "*", PrincipalArn: "arn:aws:sts::111122223333:assumed-role/other/s"}, iampolicy.NotAllowed},
		{"null true absent", []string{nullCond}, send, iampolicy.Allow},
		{"null true present", []string{nullCond}, sendFromRule, iampolicy.NotAllowed},
	})
}

func TestEvaluateResource(t *testing.T) {
	t.Parallel()
	queuePolicy := `{"Version":"2012-10-17","Id":"q","Statement":[{"Sid":"events","Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"` + queueArn + `","Condition":{"ArnEquals":{"aws:SourceArn":"` + ruleArn + `"}}}]}`
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["lambda.amazonaws.com","scheduler.amazonaws.com"]},"Action":"sts:AssumeRole"}]}`
	trustAccount := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"sts:AssumeRole"}}`
	trustRole := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::111122223333:role/path/relay"]},"Action":"sts:AssumeRole"}}`
	anyone := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sns:Publish","Resource":"*"},{"Effect":"Deny","Principal":{"AWS":"*"},"Action":"sns:Publish","Resource":"*","Condition":{"StringNotEquals":{"aws:SourceAccount":"111122223333"}}}]}`
	noPrincipal := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
	notPrincipal := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","NotPrincipal":{"Service":"lambda.amazonaws.com"},"Action":"*","Resource":"*"}]}`

	checkDecisions(t, "EvaluateResource", iampolicy.EvaluateResource, []decision[string]{
		{"service with source arn", queuePolicy, iampolicy.Request{Action: "sqs:SendMessage", Resource: queueArn, PrincipalService: "events.amazonaws.com", SourceArn: ruleArn}, iampolicy.Allow},
		{"service wrong source arn", queuePolicy, iampolicy.Request{Action: "sqs:SendMessage", Resource: queueArn, PrincipalService: "events.amazonaws.com", SourceArn: ruleArn + "x"}, iampolicy.NotAllowed},
		{"service no source arn", queuePolicy, iampolicy.Request{Action: "sqs:SendMessage", Resource: queueArn, PrincipalService: "events.amazonaws.com"}, iampolicy.NotAllowed},
		{"other service", queuePolicy, iampolicy.Request{Action: "sqs:SendMessage", Resource: queueArn, PrincipalService: "sns.amazonaws.com", SourceArn: ruleArn}, iampolicy.NotAllowed},
		{"role not a service principal", queuePolicy, iampolicy.Request{Action: "sqs:SendMessage", Resource: queueArn, PrincipalArn: roleSession, SourceArn: ruleArn}, iampolicy.NotAllowed},
		{"trust lambda", trust, iampolicy.Request{Action: "sts:AssumeRole", Resource: "arn:aws:iam::111122223333:role/r", PrincipalService: "lambda.amazonaws.com"}, iampolicy.Allow},
		{"trust scheduler", trust, iampolicy.Request{Action: "sts:AssumeRole", Resource: "arn:aws:iam::111122223333:role/r", PrincipalService: "scheduler.amazonaws.com"}, iampolicy.Allow},
		{"trust not events", trust, iampolicy.Request{Action: "sts:AssumeRole", Resource: "arn:aws:iam::111122223333:role/r", PrincipalService: "events.amazonaws.com"}, iampolicy.NotAllowed},
		{"trust other action", trust, iampolicy.Request{Action: "sts:TagSession", PrincipalService: "lambda.amazonaws.com"}, iampolicy.NotAllowed},
		{"trust account root", trustAccount, iampolicy.Request{Action: "sts:AssumeRole", PrincipalArn: roleSession}, iampolicy.Allow},
		{"trust account root other account", trustAccount, iampolicy.Request{Action: "sts:AssumeRole", PrincipalArn: "arn:aws:sts::999999999999:assumed-role/relay/s"}, iampolicy.NotAllowed},
		{"trust role matches its session", trustRole, iampolicy.Request{Action: "sts:AssumeRole", PrincipalArn: roleSession}, iampolicy.Allow},
		{"trust role other session", trustRole, iampolicy.Request{Action: "sts:AssumeRole", PrincipalArn: "arn:aws:sts::111122223333:assumed-role/other/s"}, iampolicy.NotAllowed},
		{"star allows same account", anyone, iampolicy.Request{Action: "sns:Publish", Resource: "t", PrincipalArn: roleSession, SourceAccount: "111122223333"}, iampolicy.Allow},
		{"deny other account", anyone, iampolicy.Request{Action: "sns:Publish", Resource: "t", PrincipalArn: roleSession, SourceAccount: "999999999999"}, iampolicy.Deny},
		{"statement without principal never applies", noPrincipal, iampolicy.Request{Action: "sns:Publish", Resource: "t", PrincipalArn: roleSession}, iampolicy.NotAllowed},
		{"not principal excludes the named", notPrincipal, iampolicy.Request{Action: "x:y", Resource: "t", PrincipalService: "lambda.amazonaws.com"}, iampolicy.NotAllowed},
		{"not principal denies others", notPrincipal, iampolicy.Request{Action: "x:y", Resource: "t", PrincipalArn: roleSession}, iampolicy.Deny},
		{"malformed", `{"Statement":[{"Effect":"Allow"}]}`, iampolicy.Request{Action: "x:y"}, iampolicy.NotAllowed},
	})
}

// decision is a case of an evaluation: policy, evaluated for req, decides
// want.
type decision[P any] struct {
	name   string
	policy P
	req    iampolicy.Request
	want   iampolicy.Decision
}

// checkDecisions runs a parallel subtest a case, evaluated by fn (named
// name).
func checkDecisions[P any](t *testing.T, name string, fn func(P, iampolicy.Request) iampolicy.Decision, cases []decision[P]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := fn(tc.policy, tc.req); got != tc.want {
				t.Fatalf("%s = %v, want %v", name, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		``,
		`{}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Maybe","Action":"*","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","NotAction":"x:y","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"NumericFoo":{"a":"1"}}}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Principal":"me"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Bogus":1}]}`,
	} {
		if _, err := iampolicy.Parse(doc); err == nil {
			t.Errorf("Parse(%q) succeeded", doc)
		}
	}
	p, err := iampolicy.Parse(`{"Version":"2012-10-17","Statement":{"Sid":"a","Effect":"Allow","Action":"s3:GetObject","Resource":["x","y"]}}`)
	if err != nil || len(p.Statements) != 1 || p.Statements[0].Sid != "a" || len(p.Statements[0].Resource) != 2 {
		t.Fatalf("Parse = %+v, %v", p, err)
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, value string
		want           bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbb", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"arn:aws:sqs:*:*:q-*", "arn:aws:sqs:us-east-1:1:q-1", true},
		{"Abc", "abc", false},
		{"*a*b*", "xxaxxbxx", true},
		{"*a*b", "xxaxxbxx", false},
	}
	for _, tc := range tests {
		if got := iampolicy.Match(tc.pattern, tc.value); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.value, got, tc.want)
		}
	}
}

// TestEvaluateResourceContextKeys: a Deny on aws:SecureTransport applies
// to the requests whose context says "false", and to no other.
func TestEvaluateResourceContextKeys(t *testing.T) {
	t.Parallel()
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*",
"Resource":"arn:aws:s3:::b/*","Condition":{"Bool":{"aws:SecureTransport":false}}}]}`
	req := iampolicy.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", PrincipalArn: "arn:aws:iam::000000000000:root"}
	for secure, want := range map[string]iampolicy.Decision{"false": iampolicy.Deny, "true": iampolicy.NotAllowed} {
		req.Context = map[string]string{"aws:securetransport": secure}
		if got := iampolicy.EvaluateResource(doc, req); got != want {
			t.Errorf("aws:SecureTransport %s: %v, want %v", secure, got, want)
		}
	}
	req.Context = nil
	if got := iampolicy.EvaluateResource(doc, req); got != iampolicy.NotAllowed {
		t.Errorf("without the key: %v, want NotAllowed", got)
	}
}

// TestSetOperators: ForAnyValue and ForAllValues over a multivalued key,
// with AWS's answers for a missing key and an empty set, and the other
// base operators in their set and IfExists forms.
func TestSetOperators(t *testing.T) {
	t.Parallel()
	cond := func(op, key, value string) []string {
		return []string{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"kms:Decrypt","Resource":"*","Condition":{"` +
			op + `":{"` + key + `":` + value + `}}}]}`}
	}
	aliases := func(a ...string) iampolicy.Request {
		r := iampolicy.Request{Action: "kms:Decrypt", Resource: "arn:aws:kms:us-east-1:111122223333:key/k", PrincipalArn: roleSession}
		if a != nil {
			r.Sets = map[string][]string{"kms:resourcealiases": a}
		}
		return r
	}
	single := func(key, v string) iampolicy.Request {
		r := aliases()
		r.Context = map[string]string{key: v}
		return r
	}
	anyAlias := cond("ForAnyValue:StringEquals", "kms:ResourceAliases", `["alias/a","alias/b"]`)
	anyAliasIfExists := cond("ForAnyValue:StringEqualsIfExists", "kms:ResourceAliases", `"alias/a"`)
	allAliases := cond("ForAllValues:StringLike", "kms:ResourceAliases", `"alias/a*"`)
	anyNotAlias := cond("ForAnyValue:StringNotEquals", "kms:ResourceAliases", `"alias/a"`)
	numeric := cond("NumericLessThanEquals", "aws:MultiFactorAuthAge", `"3600"`)
	date := cond("DateGreaterThan", "aws:CurrentTime", `"2026-12-04T00:00:00Z"`)
	ip := cond("NotIpAddressIfExists", "aws:SourceIp", `["10.0.0.0/8","192.168.1.1"]`)
	checkDecisions(t, "Evaluate", iampolicy.Evaluate, []decision[[]string]{
		{"ForAnyValue one of the values", anyAlias, aliases("alias/x", "alias/b"), iampolicy.Allow},
		{"ForAnyValue none of the values", anyAlias, aliases("alias/x"), iampolicy.NotAllowed},
		{"ForAnyValue empty set", anyAlias, aliases([]string{}...), iampolicy.NotAllowed},
		{"ForAnyValue missing key", anyAlias, aliases(), iampolicy.NotAllowed},
		{"ForAnyValue IfExists missing key", anyAliasIfExists, aliases(), iampolicy.NotAllowed},
		{"ForAnyValue single-valued key", cond("ForAnyValue:StringEquals", "aws:PrincipalTag/team", `"billing"`), single("aws:principaltag/team", "billing"), iampolicy.Allow},
		{"ForAnyValue negated, some value differs", anyNotAlias, aliases("alias/a", "alias/x"), iampolicy.Allow},
		{"ForAnyValue negated, every value equal", anyNotAlias, aliases("alias/a"), iampolicy.NotAllowed},
		{"ForAllValues every value", allAliases, aliases("alias/a1", "alias/a2"), iampolicy.Allow},
		{"ForAllValues one value outside", allAliases, aliases("alias/a1", "alias/b"), iampolicy.NotAllowed},
		{"ForAllValues empty set", allAliases, aliases([]string{}...), iampolicy.Allow},
		{"ForAllValues missing key", allAliases, aliases(), iampolicy.Allow},
		{"numeric holds", numeric, single("aws:multifactorauthage", "3600"), iampolicy.Allow},
		{"numeric fails", numeric, single("aws:multifactorauthage", "3601"), iampolicy.NotAllowed},
		{"numeric not a number", numeric, single("aws:multifactorauthage", "x"), iampolicy.NotAllowed},
		{"date holds", date, single("aws:currenttime", "2026-12-05T00:00:00Z"), iampolicy.Allow},
		{"date fails", date, single("aws:currenttime", "2026-12-04T00:00:00Z"), iampolicy.NotAllowed},
		{"not ip outside", ip, single("aws:sourceip", "172.16.0.1"), iampolicy.Allow},
		{"not ip inside the block", ip, single("aws:sourceip", "10.2.3.4"), iampolicy.NotAllowed},
		{"not ip the address", ip, single("aws:sourceip", "192.168.1.1"), iampolicy.NotAllowed},
		{"not ip IfExists missing", ip, aliases(), iampolicy.Allow},
	})
	for _, op := range []string{"ForAnyValue:StringEqualsIgnoreCaseIfExists", "ForAllValues:ArnLike", "ForAnyValue:NumericGreaterThan", "BinaryEquals", "DateNotEqualsIfExists", "IpAddress", "ForAnyValue:Null", "NullIfExists"} {
		if _, err := iampolicy.Parse(cond(op, "aws:TagKeys", `"x"`)[0]); err != nil {
			t.Errorf("Parse refuses %s: %v", op, err)
		}
	}
	for _, op := range []string{"ForSomeValues:StringEquals", "StringEqualz"} {
		if _, err := iampolicy.Parse(cond(op, "aws:TagKeys", `"x"`)[0]); err == nil {
			t.Errorf("Parse accepts %s", op)
		}
	}
}

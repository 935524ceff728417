package lambda

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

var (
	statementIDRe = regexp.MustCompile(`^([a-zA-Z0-9-_]+)$`)
	accountIDRe   = regexp.MustCompile(`^\d{12}$`)
)

type addPermissionInput struct {
	StatementID      string `json:"StatementId"`
	Action           string `json:"Action"`
	Principal        string `json:"Principal"`
	SourceArn        string `json:"SourceArn"`
	SourceAccount    string `json:"SourceAccount"`
	EventSourceToken string `json:"EventSourceToken"`
	RevisionID       string `json:"RevisionId"`
	PrincipalOrgID   string `json:"PrincipalOrgID"`
}

// statement builds a policy statement the way Lambda writes it.
func (s *Service) statement(f *function, in addPermissionInput) map[string]any {
	var principal any
	switch {
	case in.Principal == "*":
		principal = "*"
	case strings.HasSuffix(in.Principal, ".amazonaws.com") || strings.HasSuffix(in.Principal, ".amazonaws.com.cn"):
		principal = map[string]string{"Service": in.Principal}
	case accountIDRe.MatchString(in.Principal):
		principal = map[string]string{"AWS": awsapi.ARN("iam", "", in.Principal, "root")}
	default:
		principal = map[string]string{"AWS": in.Principal}
	}
	st := map[string]any{
		"Sid":       in.StatementID,
		"Effect":    "Allow",
		"Principal": principal,
		"Action":    in.Action,
		"Resource":  f.arn,
	}
	cond := map[string]map[string]string{}
	if in.SourceArn != "" {
		cond["ArnLike"] = map[string]string{"AWS:SourceArn": in.SourceArn}
	}
	if in.SourceAccount != "" {
		if cond["StringEquals"] == nil {
			cond["StringEquals"] = map[string]string{}
		}
		cond["StringEquals"]["AWS:SourceAccount"] = in.SourceAccount
	}
	if in.PrincipalOrgID != "" {
		if cond["StringEquals"] == nil {
			cond["StringEquals"] = map[string]string{}
		}
		cond["StringEquals"]["aws:PrincipalOrgID"] = in.PrincipalOrgID
	}
	if in.EventSourceToken != "" {
		if cond["StringEquals"] == nil {
			cond["StringEquals"] = map[string]string{}
		}
		cond["StringEquals"]["lambda:EventSourceToken"] = in.EventSourceToken
	}
	if len(cond) > 0 {
		st["Condition"] = cond
	}
	return st
}

func policyDocument(f *function) string {
	doc := map[string]any{"Version": "2012-10-17", "Id": "default", "Statement": f.policy}
	b, _ := json.Marshal(doc)
	return string(b)
}

func (s *Service) addPermission(req *awsapi.Request, in *addPermissionInput) (any, error) {
	if !statementIDRe.MatchString(in.StatementID) || len(in.StatementID) > 100 {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'statementId' failed to satisfy constraint: Member must satisfy regular expression pattern: ([a-zA-Z0-9-_]+)", in.StatementID)
	}
	if in.Action == "" || in.Principal == "" {
		return nil, awsapi.ValidationException("1 validation error detected: Value null at 'action' or 'principal' failed to satisfy constraint: Member must not be null")
	}
	action := strings.ToLower(in.Action)
	if !strings.HasPrefix(action, "lambda:") {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'action' failed to satisfy constraint: Member must satisfy regular expression pattern: (lambda:[*]|lambda:[a-zA-Z]+|[*])", in.Action)
	}
	return s.onFunction(req, "lambda:AddPermission", qualified, func(f *function) (any, error) { return s.addStatementLocked(f, in) })
}

func (s *Service) addStatementLocked(f *function, in *addPermissionInput) (any, error) {
	if in.RevisionID != "" && in.RevisionID != f.policyRevision {
		return nil, errRevision()
	}
	if slices.ContainsFunc(f.policy, func(st map[string]any) bool { return st["Sid"] == in.StatementID }) {
		return nil, awsapi.ResourceConflictException("The statement id (%s) provided already exists. Please specify a new statement id, or remove the existing statement.", in.StatementID)
	}
	st := s.statement(f, *in)
	f.policy = append(f.policy, st)
	f.policyRevision = awsapi.NewUUID()
	b, _ := json.Marshal(st)
	return jsonStatus(http.StatusCreated, map[string]string{"Statement": string(b)})
}

func (s *Service) getPolicy(req *awsapi.Request) (any, error) {
	return s.onFunction(req, "lambda:GetPolicy", qualified, func(f *function) (any, error) {
		if len(f.policy) == 0 {
			return nil, awsapi.NotFound404("The resource you requested does not exist.")
		}
		return map[string]string{"Policy": policyDocument(f), "RevisionId": f.policyRevision}, nil
	})
}

func (s *Service) removePermission(req *awsapi.Request) (any, error) {
	sid, rev := req.PathValue("StatementId"), req.Query().Get("RevisionId")
	return s.onFunction(req, "lambda:RemovePermission", qualified, func(f *function) (any, error) {
		if rev != "" && rev != f.policyRevision {
			return nil, errRevision()
		}
		i := slices.IndexFunc(f.policy, func(st map[string]any) bool { return st["Sid"] == sid })
		if i < 0 {
			return nil, awsapi.NotFound404("Statement %s is not found in resource policy.", sid)
		}
		f.policy = slices.Delete(f.policy, i, i+1)
		f.policyRevision = awsapi.NewUUID()
		return jsonStatus(http.StatusNoContent, nil)
	})
}

// errRevision is the answer to a policy change with a stale RevisionId.
func errRevision() *awsapi.Error {
	return awsapi.NewError("PreconditionFailedException", "The Revision Id provided does not match the latest Revision Id. Call the GetPolicy API to retrieve the latest Revision Id")
}

// FunctionPolicy returns a function's resource-based policy document (as
// GetPolicy returns it), by name or ARN; ok is false when the function does
// not exist or has no policy.
func (s *Service) FunctionPolicy(function string) (policyJSON string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.lookupLocked(function, "")
	if err != nil || len(f.policy) == 0 {
		return "", false
	}
	return policyDocument(f), true
}

package iam

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

const timeFormat = "2006-01-02T15:04:05Z"

type xmlTag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type xmlTags struct {
	Members []xmlTag `xml:"member"`
}

type xmlRole struct {
	Path                     string       `xml:"Path"`
	RoleName                 string       `xml:"RoleName"`
	RoleID                   string       `xml:"RoleId"`
	Arn                      string       `xml:"Arn"`
	CreateDate               string       `xml:"CreateDate"`
	AssumeRolePolicyDocument string       `xml:"AssumeRolePolicyDocument"`
	Description              string       `xml:"Description,omitempty"`
	MaxSessionDuration       int          `xml:"MaxSessionDuration"`
	Tags                     *xmlTags     `xml:"Tags,omitempty"`
	PermissionsBoundary      *xmlBoundary `xml:"PermissionsBoundary,omitempty"`
	RoleLastUsed             *struct {
	} `xml:"RoleLastUsed,omitempty"`
}

type xmlPolicy struct {
	PolicyName                    string   `xml:"PolicyName"`
	PolicyID                      string   `xml:"PolicyId"`
	Arn                           string   `xml:"Arn"`
	Path                          string   `xml:"Path"`
	DefaultVersionID              string   `xml:"DefaultVersionId"`
	AttachmentCount               int      `xml:"AttachmentCount"`
	PermissionsBoundaryUsageCount int      `xml:"PermissionsBoundaryUsageCount"`
	IsAttachable                  bool     `xml:"IsAttachable"`
	Description                   string   `xml:"Description,omitempty"`
	CreateDate                    string   `xml:"CreateDate"`
	UpdateDate                    string   `xml:"UpdateDate"`
	Tags                          *xmlTags `xml:"Tags,omitempty"`
}

type xmlAttached struct {
	PolicyName string `xml:"PolicyName"`
	PolicyArn  string `xml:"PolicyArn"`
}

type xmlStrings struct {
	Members []string `xml:"member"`
}

func tagsXML(tags []tag) *xmlTags {
	if len(tags) == 0 {
		return nil
	}
	out := &xmlTags{}
	for _, t := range tags {
		out.Members = append(out.Members, xmlTag(t))
	}
	return out
}

func (r *role) xml(withTags bool) xmlRole {
	x := xmlRole{Path: r.path, RoleName: r.name, RoleID: r.id, Arn: r.arn, CreateDate: r.created.Format(timeFormat),
		AssumeRolePolicyDocument: encodeDocument(r.trust), Description: r.description, MaxSessionDuration: r.maxSession,
		PermissionsBoundary: r.boundaryXML()}
	if withTags {
		x.Tags = tagsXML(r.tags)
		x.RoleLastUsed = &struct{}{}
	}
	return x
}

func (s *Service) policyXML(p *managedPolicy, withTags bool) xmlPolicy {
	x := xmlPolicy{PolicyName: p.name, PolicyID: p.id, Arn: p.arn, Path: p.path, DefaultVersionID: "v1",
		AttachmentCount: s.attachments(p.arn), PermissionsBoundaryUsageCount: s.boundaryUsage(p.arn), IsAttachable: true, Description: p.description,
		CreateDate: p.created.Format(timeFormat), UpdateDate: p.updated.Format(timeFormat)}
	if withTags {
		x.Tags = tagsXML(p.tags)
	}
	return x
}

// attachments counts the roles a policy is attached to. Callers hold s.mu.
func (s *Service) attachments(arn string) int {
	n := 0
	for _, r := range s.roles {
		for _, a := range r.attached {
			if a == arn {
				n++
			}
		}
	}
	return n
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) {
	f := req.Form()
	switch req.Operation {
	case "CreateRole":
		return s.createRole(req, f)
	case "PutRolePermissionsBoundary":
		return s.putRolePermissionsBoundary(req, f)
	case "DeleteRolePermissionsBoundary":
		return s.deleteRolePermissionsBoundary(req, f)
	case "GetRole":
		return s.withRole(req, f, "iam:GetRole", false, func(r *role) (any, error) {
			return struct {
				Role xmlRole `xml:"Role"`
			}{r.xml(true)}, nil
		})
	case "UpdateRole":
		return s.withRole(req, f, "iam:UpdateRole", true, func(r *role) (any, error) {
			if f.Has("Description") {
				if len(f.Get("Description")) > 1000 {
					return nil, validationError("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 1000")
				}
				r.description = f.Get("Description")
			}
			if v := f.Get("MaxSessionDuration"); v != "" {
				n, err := maxSession(v)
				if err != nil {
					return nil, err
				}
				r.maxSession = n
			}
			return nil, nil
		})
	case "UpdateAssumeRolePolicy":
		return s.withRole(req, f, "iam:UpdateAssumeRolePolicy", true, func(r *role) (any, error) {
			doc := f.Get("PolicyDocument")
			if err := checkDocument(doc, true); err != nil {
				return nil, err
			}
			r.trust = doc
			s.touch(r)
			return nil, nil
		})
	case "DeleteRole":
		return s.deleteRole(req, f)
	case "ListRoles":
		return s.listRoles(req, f)
	case "TagRole":
		return s.withRole(req, f, "iam:TagRole", true, func(r *role) (any, error) {
			tags := mergeTags(r.tags, tagsFrom(f, "Tags"))
			if err := checkTags(tags); err != nil {
				return nil, err
			}
			r.tags = tags
			return nil, nil
		})
	case "UntagRole":
		return s.withRole(req, f, "iam:UntagRole", true, func(r *role) (any, error) {
			keys := listFrom(f, "TagKeys")
			kept := r.tags[:0:0]
			for _, t := range r.tags {
				drop := false
				for _, k := range keys {
					drop = drop || k == t.Key
				}
				if !drop {
					kept = append(kept, t)
				}
			}
			r.tags = kept
			return nil, nil
		})
	case "ListRoleTags":
		return s.withRole(req, f, "iam:ListRoleTags", false, func(r *role) (any, error) {
			start, end, marker, err := paginate(f, len(r.tags))
			if err != nil {
				return nil, err
			}
			tags := tagsXML(r.tags[start:end])
			if tags == nil {
				tags = &xmlTags{}
			}
			return struct {
				Tags        *xmlTags `xml:"Tags"`
				IsTruncated bool     `xml:"IsTruncated"`
				Marker      string   `xml:"Marker,omitempty"`
			}{tags, marker != "", marker}, nil
		})
	case "PutRolePolicy":
		return s.withRole(req, f, "iam:PutRolePolicy", true, func(r *role) (any, error) {
			name, doc := f.Get("PolicyName"), f.Get("PolicyDocument")
			if err := checkName("policyName", name, policyNameRE, 128); err != nil {
				return nil, err
			}
			if err := checkDocument(doc, false); err != nil {
				return nil, err
			}
			r.inline[name] = doc
			s.touch(r)
			return nil, nil
		})
	case "GetRolePolicy":
		return s.withRole(req, f, "iam:GetRolePolicy", false, func(r *role) (any, error) {
			name := f.Get("PolicyName")
			doc, ok := r.inline[name]
			if !ok {
				return nil, noSuchEntity("The role policy with name %s cannot be found.", name)
			}
			return struct {
				RoleName       string `xml:"RoleName"`
				PolicyName     string `xml:"PolicyName"`
				PolicyDocument string `xml:"PolicyDocument"`
			}{r.name, name, encodeDocument(doc)}, nil
		})
	case "DeleteRolePolicy":
		return s.withRole(req, f, "iam:DeleteRolePolicy", true, func(r *role) (any, error) {
			name := f.Get("PolicyName")
			if _, ok := r.inline[name]; !ok {
				return nil, noSuchEntity("The role policy with name %s cannot be found.", name)
			}
			delete(r.inline, name)
			s.touch(r)
			return nil, nil
		})
	case "ListRolePolicies":
		return s.withRole(req, f, "iam:ListRolePolicies", false, func(r *role) (any, error) {
			names := make([]string, 0, len(r.inline))
			for n := range r.inline {
				names = append(names, n)
			}
			sort.Strings(names)
			start, end, marker, err := paginate(f, len(names))
			if err != nil {
				return nil, err
			}
			return struct {
				PolicyNames xmlStrings `xml:"PolicyNames"`
				IsTruncated bool       `xml:"IsTruncated"`
				Marker      string     `xml:"Marker,omitempty"`
			}{xmlStrings{names[start:end]}, marker != "", marker}, nil
		})
	case "AttachRolePolicy":
		return s.withRole(req, f, "iam:AttachRolePolicy", true, func(r *role) (any, error) {
			arn := f.Get("PolicyArn")
			if _, err := awsapi.ParseARN(arn); err != nil {
				return nil, invalidInput("ARN %s is not valid.", arn)
			}
			if s.policies[arn] == nil {
				return nil, noSuchEntity("Policy %s does not exist or is not attachable.", arn)
			}
			for _, a := range r.attached {
				if a == arn {
					return nil, nil
				}
			}
			if len(r.attached) >= 20 {
				return nil, awsapi.NewError("LimitExceeded", "Cannot exceed quota for PoliciesPerRole: 20")
			}
			r.attached = append(r.attached, arn)
			s.touch(r)
			return nil, nil
		})
	case "DetachRolePolicy":
		return s.withRole(req, f, "iam:DetachRolePolicy", true, func(r *role) (any, error) {
			arn := f.Get("PolicyArn")
			for i, a := range r.attached {
				if a == arn {
					r.attached = append(r.attached[:i:i], r.attached[i+1:]...)
					s.touch(r)
					return nil, nil
				}
			}
			return nil, noSuchEntity("Policy %s was not found.", arn)
		})
	case "ListAttachedRolePolicies":
		return s.withRole(req, f, "iam:ListAttachedRolePolicies", false, func(r *role) (any, error) {
			var out []xmlAttached
			prefix := f.Get("PathPrefix")
			for _, a := range r.attached {
				if p := s.policies[a]; p != nil && strings.HasPrefix(p.path, prefix) {
					out = append(out, xmlAttached{p.name, p.arn})
				}
			}
			start, end, marker, err := paginate(f, len(out))
			if err != nil {
				return nil, err
			}
			return struct {
				AttachedPolicies struct {
					Members []xmlAttached `xml:"member"`
				} `xml:"AttachedPolicies"`
				IsTruncated bool   `xml:"IsTruncated"`
				Marker      string `xml:"Marker,omitempty"`
			}{struct {
				Members []xmlAttached `xml:"member"`
			}{out[start:end]}, marker != "", marker}, nil
		})
	case "CreatePolicy":
		return s.createPolicy(req, f)
	case "GetPolicy":
		return s.withPolicy(req, f, "iam:GetPolicy", func(p *managedPolicy) (any, error) {
			return struct {
				Policy xmlPolicy `xml:"Policy"`
			}{s.policyXML(p, true)}, nil
		})
	case "GetPolicyVersion":
		return s.withPolicy(req, f, "iam:GetPolicyVersion", func(p *managedPolicy) (any, error) {
			if v := f.Get("VersionId"); v != "v1" {
				return nil, noSuchEntity("Policy %s version %s does not exist or is not attachable.", p.arn, v)
			}
			type version struct {
				Document         string `xml:"Document"`
				VersionID        string `xml:"VersionId"`
				IsDefaultVersion bool   `xml:"IsDefaultVersion"`
				CreateDate       string `xml:"CreateDate"`
			}
			return struct {
				PolicyVersion version `xml:"PolicyVersion"`
			}{version{encodeDocument(p.document), "v1", true, p.created.Format(timeFormat)}}, nil
		})
	case "DeletePolicy":
		return s.deletePolicy(req, f)
	case "ListPolicies":
		return s.listPolicies(req, f)
	}
	return nil, awsapi.InvalidAction(req.Operation)
}

func maxSession(v string) (int, *awsapi.Error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 3600 || n > 43200 {
		return 0, validationError("1 validation error detected: Value '%s' at 'maxSessionDuration' failed to satisfy constraint: Member must have value less than or equal to 43200", v)
	}
	return n, nil
}

func (s *Service) roleARN(path, name string) string {
	return s.env.GlobalARN("iam", "role"+path+name)
}

// withRole authorises action on the role named by RoleName and runs fn
// under the lock (for writing when write).
func (s *Service) withRole(req *awsapi.Request, f url.Values, action string, write bool, fn func(r *role) (any, error)) (any, error) {
	name := f.Get("RoleName")
	if err := checkName("roleName", name, roleNameRE, 64); err != nil {
		return nil, err
	}
	s.mu.RLock()
	arn := s.roleARN("/", name)
	if r := s.roles[name]; r != nil {
		arn = r.arn
	}
	s.mu.RUnlock()
	// The authorizer takes the lock itself.
	if err := req.Authorize(action, arn); err != nil {
		return nil, err
	}
	if write {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	r := s.roles[name]
	if r == nil {
		return nil, noSuchEntity("The role with name %s cannot be found.", name)
	}
	return fn(r)
}

func (s *Service) createRole(req *awsapi.Request, f url.Values) (any, error) {
	name, path, doc := f.Get("RoleName"), f.Get("Path"), f.Get("AssumeRolePolicyDocument")
	if path == "" {
		path = "/"
	}
	if err := checkName("roleName", name, roleNameRE, 64); err != nil {
		return nil, err
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if err := checkDocument(doc, true); err != nil {
		return nil, err
	}
	if len(f.Get("Description")) > 1000 {
		return nil, validationError("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 1000")
	}
	ms := 3600
	if v := f.Get("MaxSessionDuration"); v != "" {
		n, err := maxSession(v)
		if err != nil {
			return nil, err
		}
		ms = n
	}
	tags := tagsFrom(f, "Tags")
	if err := checkTags(tags); err != nil {
		return nil, err
	}
	arn := s.roleARN(path, name)
	if err := req.Authorize("iam:CreateRole", arn); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n := range s.roles {
		if strings.EqualFold(n, name) {
			return nil, entityAlreadyExists("Role with name %s already exists.", name)
		}
	}
	boundary := f.Get("PermissionsBoundary")
	if boundary != "" {
		if err := s.checkBoundary(boundary); err != nil {
			return nil, err
		}
	}
	r := &role{name: name, path: path, id: newID("AROA"), arn: arn, created: s.now().Truncate(time.Second), trust: doc,
		description: f.Get("Description"), maxSession: ms, tags: tags, inline: map[string]string{}, boundary: boundary}
	s.roles[name] = r
	s.touch(r)
	return struct {
		Role xmlRole `xml:"Role"`
	}{r.xml(false)}, nil
}

func (s *Service) deleteRole(req *awsapi.Request, f url.Values) (any, error) {
	return s.withRole(req, f, "iam:DeleteRole", true, func(r *role) (any, error) {
		if len(r.attached) > 0 {
			return nil, deleteConflict("Cannot delete entity, must detach all policies first.")
		}
		if len(r.inline) > 0 {
			return nil, deleteConflict("Cannot delete entity, must delete policies first.")
		}
		delete(s.roles, r.name)
		return nil, nil
	})
}

func (s *Service) listRoles(req *awsapi.Request, f url.Values) (any, error) {
	if err := req.Authorize("iam:ListRoles", s.env.GlobalARN("iam", "role/")); err != nil {
		return nil, err
	}
	prefix := f.Get("PathPrefix")
	s.mu.RLock()
	defer s.mu.RUnlock()
	var roles []*role
	for _, r := range s.roles {
		if strings.HasPrefix(r.path, prefix) {
			roles = append(roles, r)
		}
	}
	sort.Slice(roles, func(i, j int) bool { return strings.ToLower(roles[i].name) < strings.ToLower(roles[j].name) })
	start, end, marker, err := paginate(f, len(roles))
	if err != nil {
		return nil, err
	}
	out := struct {
		Roles struct {
			Members []xmlRole `xml:"member"`
		} `xml:"Roles"`
		IsTruncated bool   `xml:"IsTruncated"`
		Marker      string `xml:"Marker,omitempty"`
	}{IsTruncated: marker != "", Marker: marker}
	for _, r := range roles[start:end] {
		out.Roles.Members = append(out.Roles.Members, r.xml(false))
	}
	return out, nil
}

func (s *Service) withPolicy(req *awsapi.Request, f url.Values, action string, fn func(p *managedPolicy) (any, error)) (any, error) {
	arn := f.Get("PolicyArn")
	if _, err := awsapi.ParseARN(arn); err != nil {
		return nil, invalidInput("ARN %s is not valid.", arn)
	}
	if err := req.Authorize(action, arn); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.policies[arn]
	if p == nil {
		return nil, noSuchEntity("Policy %s was not found.", arn)
	}
	return fn(p)
}

func (s *Service) createPolicy(req *awsapi.Request, f url.Values) (any, error) {
	name, path, doc := f.Get("PolicyName"), f.Get("Path"), f.Get("PolicyDocument")
	if path == "" {
		path = "/"
	}
	if err := checkName("policyName", name, policyNameRE, 128); err != nil {
		return nil, err
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if err := checkDocument(doc, false); err != nil {
		return nil, err
	}
	tags := tagsFrom(f, "Tags")
	if err := checkTags(tags); err != nil {
		return nil, err
	}
	arn := s.env.GlobalARN("iam", "policy"+path+name)
	if err := req.Authorize("iam:CreatePolicy", arn); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.policies {
		if !p.awsManaged && p.name == name {
			return nil, entityAlreadyExists("A policy called %s already exists. Duplicate names are not allowed.", name)
		}
	}
	now := s.now().Truncate(time.Second)
	p := &managedPolicy{name: name, path: path, id: newID("ANPA"), arn: arn, description: f.Get("Description"),
		document: doc, created: now, updated: now, tags: tags}
	s.policies[arn] = p
	return struct {
		Policy xmlPolicy `xml:"Policy"`
	}{s.policyXML(p, true)}, nil
}

func (s *Service) deletePolicy(req *awsapi.Request, f url.Values) (any, error) {
	arn := f.Get("PolicyArn")
	if _, err := awsapi.ParseARN(arn); err != nil {
		return nil, invalidInput("ARN %s is not valid.", arn)
	}
	if err := req.Authorize("iam:DeletePolicy", arn); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.policies[arn]
	if p == nil {
		return nil, noSuchEntity("Policy %s was not found.", arn)
	}
	if p.awsManaged {
		return nil, invalidInput("Cannot delete an AWS managed policy.")
	}
	if s.attachments(arn) > 0 || s.boundaryUsage(arn) > 0 {
		return nil, deleteConflict("Cannot delete a policy attached to entities.")
	}
	delete(s.policies, arn)
	return nil, nil
}

func (s *Service) listPolicies(req *awsapi.Request, f url.Values) (any, error) {
	if err := req.Authorize("iam:ListPolicies", s.env.GlobalARN("iam", "policy/")); err != nil {
		return nil, err
	}
	scope := f.Get("Scope")
	if scope == "" {
		scope = "All"
	}
	onlyAttached := f.Get("OnlyAttached") == "true"
	prefix := f.Get("PathPrefix")
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ps []*managedPolicy
	for _, p := range s.policies {
		if (scope == "AWS" && !p.awsManaged) || (scope == "Local" && p.awsManaged) {
			continue
		}
		if onlyAttached && s.attachments(p.arn) == 0 {
			continue
		}
		if strings.HasPrefix(p.path, prefix) {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].arn < ps[j].arn })
	start, end, marker, err := paginate(f, len(ps))
	if err != nil {
		return nil, err
	}
	out := struct {
		Policies struct {
			Members []xmlPolicy `xml:"member"`
		} `xml:"Policies"`
		IsTruncated bool   `xml:"IsTruncated"`
		Marker      string `xml:"Marker,omitempty"`
	}{IsTruncated: marker != "", Marker: marker}
	for _, p := range ps[start:end] {
		out.Policies.Members = append(out.Policies.Members, s.policyXML(p, false))
	}
	return out, nil
}

package iam

import (
	"encoding/xml"
	"errors"
	"maps"
	"net/url"
	"regexp"
	"slices"
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

// listPage is one page of a list operation's result: the members of the
// element the operation names, IsTruncated and Marker.
type listPage[T any] struct {
	element string
	members []T
	marker  string
}

// paged applies Marker and MaxItems to items and returns the page.
func paged[T any](f url.Values, element string, items []T) (any, error) {
	start, end, marker, err := paginate(f, len(items))
	if err != nil {
		return nil, err
	}
	return listPage[T]{element, items[start:end], marker}, nil
}

// MarshalXML writes the page as IAM does: <Element><member>…</member>
// </Element><IsTruncated/>, and <Marker/> when there is more.
func (p listPage[T]) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	elem := func(name string) xml.StartElement { return xml.StartElement{Name: xml.Name{Local: name}} }
	members := struct {
		Members []T `xml:"member"`
	}{p.members}
	err := errors.Join(e.EncodeToken(start), e.EncodeElement(members, elem(p.element)),
		e.EncodeElement(p.marker != "", elem("IsTruncated")))
	if p.marker != "" {
		err = errors.Join(err, e.EncodeElement(p.marker, elem("Marker")))
	}
	return errors.Join(err, e.EncodeToken(start.End()))
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

// operations is the table of the operations served, each reading the
// request's awsQuery parameters; those on one role find it, authorise the
// action on it and run under the lock (onRole).
func (s *Service) operations() awsapi.Operations {
	return awsapi.Operations{
		"CreateRole":                    {Handle: awsapi.FromForm(s.createRole)},
		"GetRole":                       {Handle: s.onRole("iam:GetRole", read, getRole)},
		"UpdateRole":                    {Handle: s.onRole("iam:UpdateRole", write, updateRole)},
		"UpdateAssumeRolePolicy":        {Handle: s.onRole("iam:UpdateAssumeRolePolicy", write, s.updateAssumeRolePolicy)},
		"DeleteRole":                    {Handle: s.onRole("iam:DeleteRole", write, s.deleteRole)},
		"ListRoles":                     {Handle: s.onList("iam:ListRoles", "role/", s.listRoles)},
		"TagRole":                       {Handle: s.onRole("iam:TagRole", write, tagRole)},
		"UntagRole":                     {Handle: s.onRole("iam:UntagRole", write, untagRole)},
		"ListRoleTags":                  {Handle: s.onRole("iam:ListRoleTags", read, listRoleTags)},
		"PutRolePermissionsBoundary":    {Handle: s.onRole("iam:PutRolePermissionsBoundary", write, s.putRolePermissionsBoundary)},
		"DeleteRolePermissionsBoundary": {Handle: s.onRole("iam:DeleteRolePermissionsBoundary", write, s.deleteRolePermissionsBoundary)},
		"PutRolePolicy":                 {Handle: s.onRole("iam:PutRolePolicy", write, s.putRolePolicy)},
		"GetRolePolicy":                 {Handle: s.onRole("iam:GetRolePolicy", read, getRolePolicy)},
		"DeleteRolePolicy":              {Handle: s.onRole("iam:DeleteRolePolicy", write, s.deleteRolePolicy)},
		"ListRolePolicies":              {Handle: s.onRole("iam:ListRolePolicies", read, listRolePolicies)},
		"AttachRolePolicy":              {Handle: s.onRole("iam:AttachRolePolicy", write, s.attachRolePolicy)},
		"DetachRolePolicy":              {Handle: s.onRole("iam:DetachRolePolicy", write, s.detachRolePolicy)},
		"ListAttachedRolePolicies":      {Handle: s.onRole("iam:ListAttachedRolePolicies", read, s.listAttachedRolePolicies)},
		"CreatePolicy":                  {Handle: awsapi.FromForm(s.createPolicy)},
		"GetPolicy":                     {Handle: s.onPolicy("iam:GetPolicy", read, s.getPolicy)},
		"GetPolicyVersion":              {Handle: s.onPolicy("iam:GetPolicyVersion", read, getPolicyVersion)},
		"DeletePolicy":                  {Handle: s.onPolicy("iam:DeletePolicy", write, s.deletePolicy)},
		"ListPolicies":                  {Handle: s.onList("iam:ListPolicies", "policy/", s.listPolicies)},
	}
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) { return s.ops.Handle(req) }

// How an operation on one entity holds the service's lock.
const (
	read  = false
	write = true
)

// roleHandler serves an operation on the role the request names, with the
// lock held.
type roleHandler func(f url.Values, r *role) (any, error)

// onRole returns the handler of an operation on the role named by
// RoleName: it checks the name, authorises action on the role and runs h
// under the lock (for writing when write).
func (s *Service) onRole(action string, write bool, h roleHandler) func(*awsapi.Request) (any, error) {
	return awsapi.FromForm(func(req *awsapi.Request, f url.Values) (any, error) {
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
		defer s.lock(write)()
		r := s.roles[name]
		if r == nil {
			return nil, noSuchEntity("The role with name %s cannot be found.", name)
		}
		return h(f, r)
	})
}

// onPolicy returns the handler of an operation on the managed policy named
// by PolicyArn: it checks the ARN, authorises action on it and runs h under
// the lock (for writing when write).
func (s *Service) onPolicy(action string, write bool, h func(f url.Values, p *managedPolicy) (any, error)) func(*awsapi.Request) (any, error) {
	return awsapi.FromForm(func(req *awsapi.Request, f url.Values) (any, error) {
		arn := f.Get("PolicyArn")
		if _, err := awsapi.ParseARN(arn); err != nil {
			return nil, invalidInput("ARN %s is not valid.", arn)
		}
		if err := req.Authorize(action, arn); err != nil {
			return nil, err
		}
		defer s.lock(write)()
		p := s.policies[arn]
		if p == nil {
			return nil, noSuchEntity("Policy %s was not found.", arn)
		}
		return h(f, p)
	})
}

// lock takes the service's lock, for writing when write, and returns its
// release.
func (s *Service) lock(write bool) (unlock func()) {
	if write {
		s.mu.Lock()
		return s.mu.Unlock
	}
	s.mu.RLock()
	return s.mu.RUnlock
}

func getRole(_ url.Values, r *role) (any, error) {
	return struct {
		Role xmlRole `xml:"Role"`
	}{r.xml(true)}, nil
}

func updateRole(f url.Values, r *role) (any, error) {
	if f.Has("Description") {
		if err := checkDescription(f); err != nil {
			return nil, err
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
}

func (s *Service) updateAssumeRolePolicy(f url.Values, r *role) (any, error) {
	doc := f.Get("PolicyDocument")
	if err := checkDocument(doc, true); err != nil {
		return nil, err
	}
	r.trust = doc
	s.touch(r)
	return nil, nil
}

func tagRole(f url.Values, r *role) (any, error) {
	tags := awsapi.MergeTags(r.tags, tagsFrom(f, "Tags"))
	if err := checkTags(tags); err != nil {
		return nil, err
	}
	r.tags = tags
	return nil, nil
}

func untagRole(f url.Values, r *role) (any, error) {
	keys := listFrom(f, "TagKeys")
	r.tags = slices.DeleteFunc(slices.Clone(r.tags), func(t tag) bool { return slices.Contains(keys, t.Key) })
	return nil, nil
}

func listRoleTags(f url.Values, r *role) (any, error) {
	tags := make([]xmlTag, len(r.tags))
	for i, t := range r.tags {
		tags[i] = xmlTag(t)
	}
	return paged(f, "Tags", tags)
}

func (s *Service) putRolePolicy(f url.Values, r *role) (any, error) {
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
}

func getRolePolicy(f url.Values, r *role) (any, error) {
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
}

func (s *Service) deleteRolePolicy(f url.Values, r *role) (any, error) {
	name := f.Get("PolicyName")
	if _, ok := r.inline[name]; !ok {
		return nil, noSuchEntity("The role policy with name %s cannot be found.", name)
	}
	delete(r.inline, name)
	s.touch(r)
	return nil, nil
}

func listRolePolicies(f url.Values, r *role) (any, error) {
	return paged(f, "PolicyNames", slices.Sorted(maps.Keys(r.inline)))
}

func (s *Service) attachRolePolicy(f url.Values, r *role) (any, error) {
	arn := f.Get("PolicyArn")
	if _, err := awsapi.ParseARN(arn); err != nil {
		return nil, invalidInput("ARN %s is not valid.", arn)
	}
	if s.policies[arn] == nil {
		return nil, noSuchEntity("Policy %s does not exist or is not attachable.", arn)
	}
	if slices.Contains(r.attached, arn) {
		return nil, nil
	}
	if len(r.attached) >= 20 {
		return nil, awsapi.NewError("LimitExceeded", "Cannot exceed quota for PoliciesPerRole: 20")
	}
	r.attached = append(r.attached, arn)
	s.touch(r)
	return nil, nil
}

func (s *Service) detachRolePolicy(f url.Values, r *role) (any, error) {
	arn := f.Get("PolicyArn")
	i := slices.Index(r.attached, arn)
	if i < 0 {
		return nil, noSuchEntity("Policy %s was not found.", arn)
	}
	r.attached = slices.Delete(slices.Clone(r.attached), i, i+1)
	s.touch(r)
	return nil, nil
}

func (s *Service) listAttachedRolePolicies(f url.Values, r *role) (any, error) {
	var out []xmlAttached
	prefix := f.Get("PathPrefix")
	for _, a := range r.attached {
		if p := s.policies[a]; p != nil && strings.HasPrefix(p.path, prefix) {
			out = append(out, xmlAttached{p.name, p.arn})
		}
	}
	return paged(f, "AttachedPolicies", out)
}

func (s *Service) getPolicy(_ url.Values, p *managedPolicy) (any, error) {
	return struct {
		Policy xmlPolicy `xml:"Policy"`
	}{s.policyXML(p, true)}, nil
}

func getPolicyVersion(f url.Values, p *managedPolicy) (any, error) {
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
}

func checkDescription(f url.Values) *awsapi.Error {
	if len(f.Get("Description")) > 1000 {
		return validationError("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 1000")
	}
	return nil
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

// entityKind is what tells a role from a managed policy when one is
// created: the parameters naming it and its document, the name's rules and
// whether the document is a trust policy.
type entityKind struct {
	nameParam, nameField string
	nameRE               *regexp.Regexp
	maxName              int
	docParam             string
	trust                bool
}

var (
	roleKind   = entityKind{"RoleName", "roleName", roleNameRE, 64, "AssumeRolePolicyDocument", true}
	policyKind = entityKind{"PolicyName", "policyName", policyNameRE, 128, "PolicyDocument", false}
)

// newEntity reads and checks, in IAM's order, the name, path ("/" by
// default) and policy document of a role or managed policy to create.
func newEntity(f url.Values, k entityKind) (name, path, doc string, err *awsapi.Error) {
	name, path, doc = f.Get(k.nameParam), f.Get("Path"), f.Get(k.docParam)
	if path == "" {
		path = "/"
	}
	if err = checkName(k.nameField, name, k.nameRE, k.maxName); err == nil {
		if err = checkPath(path); err == nil {
			err = checkDocument(doc, k.trust)
		}
	}
	return name, path, doc, err
}

func (s *Service) createRole(req *awsapi.Request, f url.Values) (any, error) {
	name, path, doc, verr := newEntity(f, roleKind)
	if verr != nil {
		return nil, verr
	}
	if err := checkDescription(f); err != nil {
		return nil, err
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

func (s *Service) deleteRole(_ url.Values, r *role) (any, error) {
	if len(r.attached) > 0 {
		return nil, deleteConflict("Cannot delete entity, must detach all policies first.")
	}
	if len(r.inline) > 0 {
		return nil, deleteConflict("Cannot delete entity, must delete policies first.")
	}
	delete(s.roles, r.name)
	return nil, nil
}

// onList returns the handler of a list operation: it authorises action on
// the account's resource (role/, policy/) and runs h under the read lock.
func (s *Service) onList(action, resource string, h func(f url.Values) (any, error)) func(*awsapi.Request) (any, error) {
	return awsapi.FromForm(func(req *awsapi.Request, f url.Values) (any, error) {
		if err := req.Authorize(action, s.env.GlobalARN("iam", resource)); err != nil {
			return nil, err
		}
		s.mu.RLock()
		defer s.mu.RUnlock()
		return h(f)
	})
}

func (s *Service) listRoles(f url.Values) (any, error) {
	prefix := f.Get("PathPrefix")
	var roles []*role
	for _, r := range s.roles {
		if strings.HasPrefix(r.path, prefix) {
			roles = append(roles, r)
		}
	}
	sort.Slice(roles, func(i, j int) bool { return strings.ToLower(roles[i].name) < strings.ToLower(roles[j].name) })
	out := make([]xmlRole, len(roles))
	for i, r := range roles {
		out[i] = r.xml(false)
	}
	return paged(f, "Roles", out)
}

func (s *Service) createPolicy(req *awsapi.Request, f url.Values) (any, error) {
	name, path, doc, verr := newEntity(f, policyKind)
	if verr != nil {
		return nil, verr
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

func (s *Service) deletePolicy(_ url.Values, p *managedPolicy) (any, error) {
	if p.awsManaged {
		return nil, invalidInput("Cannot delete an AWS managed policy.")
	}
	if s.attachments(p.arn) > 0 || s.boundaryUsage(p.arn) > 0 {
		return nil, deleteConflict("Cannot delete a policy attached to entities.")
	}
	delete(s.policies, p.arn)
	return nil, nil
}

func (s *Service) listPolicies(f url.Values) (any, error) {
	scope := f.Get("Scope")
	if scope == "" {
		scope = "All"
	}
	onlyAttached := f.Get("OnlyAttached") == "true"
	prefix := f.Get("PathPrefix")
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
	out := make([]xmlPolicy, len(ps))
	for i, p := range ps {
		out[i] = s.policyXML(p, false)
	}
	return paged(f, "Policies", out)
}

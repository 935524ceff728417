package lambda

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// States and update statuses of a function (FunctionConfiguration).
const (
	StatePending  = "Pending"
	StateActive   = "Active"
	StateFailed   = "Failed"
	UpdateInProg  = "InProgress"
	UpdateSuccess = "Successful"
)

const (
	maxZipBytes       = 50 << 20
	maxUnzippedBytes  = 250 << 20
	defaultTimeout    = 3
	defaultMemorySize = 128
	lastModifiedFmt   = "2006-01-02T15:04:05.000-0700"
)

var (
	functionNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	roleArnRe      = regexp.MustCompile(`^arn:(aws[a-zA-Z-]*)?:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-/]+$`)
	supported      = []string{"provided.al2023", "provided.al2"}
)

// reservedEnvKeys are the environment variables a function may not set.
var reservedEnvKeys = []string{
	"_HANDLER", "_X_AMZN_TRACE_ID", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_EXECUTION_ENV",
	"AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_VERSION",
	"AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
	"AWS_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_LAMBDA_RUNTIME_API", "LAMBDA_TASK_ROOT", "LAMBDA_RUNTIME_DIR",
}

// config is the mutable configuration of a function.
type config struct {
	Runtime     string
	Role        string
	Handler     string
	Description string
	Timeout     int
	MemorySize  int
	Env         map[string]string
	HasEnv      bool
	Arch        string
	LogGroup    string
	LogFormat   string
	controls
	CodeSha256 string
	CodeSize   int64
	CodeDir    string
	Zip        []byte
}

// function is one function ($LATEST). Its fields are guarded by
// Service.mu; pool has its own lock.
type function struct {
	name string
	arn  string
	cfg  config

	tags           map[string]string
	reserved       *int
	policy         []map[string]any
	policyRevision string

	state, stateReason, stateReasonCode          string
	lastUpdate, lastUpdateReason, lastUpdateCode string
	revisionID                                   string
	lastModified                                 time.Time
	deleted                                      bool
	codeSeq                                      int

	pool *pool
}

// ---- wire shapes ----

type environment struct {
	Variables map[string]string `json:"Variables"`
}

type loggingConfig struct {
	LogFormat           string `json:"LogFormat,omitempty"`
	ApplicationLogLevel string `json:"ApplicationLogLevel,omitempty"`
	SystemLogLevel      string `json:"SystemLogLevel,omitempty"`
	LogGroup            string `json:"LogGroup,omitempty"`
}

type functionCode struct {
	ZipFile  []byte  `json:"ZipFile"`
	S3Bucket *string `json:"S3Bucket"`
	ImageURI *string `json:"ImageUri"`
}

type createFunctionInput struct {
	FunctionName  string            `json:"FunctionName"`
	Runtime       string            `json:"Runtime"`
	Role          string            `json:"Role"`
	Handler       string            `json:"Handler"`
	Code          *functionCode     `json:"Code"`
	Description   string            `json:"Description"`
	Timeout       *int              `json:"Timeout"`
	MemorySize    *int              `json:"MemorySize"`
	Publish       bool              `json:"Publish"`
	PackageType   string            `json:"PackageType"`
	Environment   *environment      `json:"Environment"`
	Tags          map[string]string `json:"Tags"`
	Architectures []string          `json:"Architectures"`
	LoggingConfig *loggingConfig    `json:"LoggingConfig"`
	controlsInput
}

type updateFunctionConfigurationInput struct {
	controlsInput
	Role          *string        `json:"Role"`
	Handler       *string        `json:"Handler"`
	Description   *string        `json:"Description"`
	Timeout       *int           `json:"Timeout"`
	MemorySize    *int           `json:"MemorySize"`
	Runtime       *string        `json:"Runtime"`
	Environment   *environment   `json:"Environment"`
	RevisionID    *string        `json:"RevisionId"`
	LoggingConfig *loggingConfig `json:"LoggingConfig"`
}

type updateFunctionCodeInput struct {
	ZipFile       []byte   `json:"ZipFile"`
	S3Bucket      *string  `json:"S3Bucket"`
	ImageURI      *string  `json:"ImageUri"`
	Architectures []string `json:"Architectures"`
	Publish       bool     `json:"Publish"`
	DryRun        bool     `json:"DryRun"`
	RevisionID    *string  `json:"RevisionId"`
}

// functionConfiguration is FunctionConfiguration on the wire.
type functionConfiguration struct {
	FunctionName               string            `json:"FunctionName"`
	FunctionArn                string            `json:"FunctionArn"`
	Runtime                    string            `json:"Runtime"`
	Role                       string            `json:"Role"`
	Handler                    string            `json:"Handler,omitempty"`
	CodeSize                   int64             `json:"CodeSize"`
	Description                string            `json:"Description"`
	Timeout                    int               `json:"Timeout"`
	MemorySize                 int               `json:"MemorySize"`
	LastModified               string            `json:"LastModified"`
	CodeSha256                 string            `json:"CodeSha256"`
	Version                    string            `json:"Version"`
	Environment                *environment      `json:"Environment,omitempty"`
	TracingConfig              map[string]string `json:"TracingConfig"`
	KMSKeyArn                  string            `json:"KMSKeyArn,omitempty"`
	VpcConfig                  *vpcConfigOutput  `json:"VpcConfig,omitempty"`
	RevisionID                 string            `json:"RevisionId"`
	State                      string            `json:"State,omitempty"`
	StateReason                string            `json:"StateReason,omitempty"`
	StateReasonCode            string            `json:"StateReasonCode,omitempty"`
	LastUpdateStatus           string            `json:"LastUpdateStatus,omitempty"`
	LastUpdateStatusReason     string            `json:"LastUpdateStatusReason,omitempty"`
	LastUpdateStatusReasonCode string            `json:"LastUpdateStatusReasonCode,omitempty"`
	PackageType                string            `json:"PackageType"`
	Architectures              []string          `json:"Architectures"`
	EphemeralStorage           map[string]int    `json:"EphemeralStorage"`
	SnapStart                  map[string]string `json:"SnapStart"`
	LoggingConfig              loggingConfig     `json:"LoggingConfig"`
}

func (s *Service) configurationLocked(f *function) functionConfiguration {
	c := functionConfiguration{
		FunctionName:               f.name,
		FunctionArn:                f.arn,
		Runtime:                    f.cfg.Runtime,
		Role:                       f.cfg.Role,
		Handler:                    f.cfg.Handler,
		CodeSize:                   f.cfg.CodeSize,
		Description:                f.cfg.Description,
		Timeout:                    f.cfg.Timeout,
		MemorySize:                 f.cfg.MemorySize,
		LastModified:               f.lastModified.UTC().Format(lastModifiedFmt),
		CodeSha256:                 f.cfg.CodeSha256,
		Version:                    "$LATEST",
		TracingConfig:              map[string]string{"Mode": f.cfg.tracingMode()},
		KMSKeyArn:                  f.cfg.KMSKeyArn,
		VpcConfig:                  f.cfg.vpcOutput(),
		RevisionID:                 f.revisionID,
		State:                      f.state,
		StateReason:                f.stateReason,
		StateReasonCode:            f.stateReasonCode,
		LastUpdateStatus:           f.lastUpdate,
		LastUpdateStatusReason:     f.lastUpdateReason,
		LastUpdateStatusReasonCode: f.lastUpdateCode,
		PackageType:                "Zip",
		Architectures:              []string{f.cfg.Arch},
		EphemeralStorage:           map[string]int{"Size": 512},
		SnapStart:                  map[string]string{"ApplyOn": "None", "OptimizationStatus": "Off"},
		LoggingConfig: loggingConfig{LogFormat: f.cfg.LogFormat, LogGroup: f.cfg.LogGroup,
			ApplicationLogLevel: f.cfg.ApplicationLogLevel, SystemLogLevel: f.cfg.SystemLogLevel},
	}
	if f.cfg.HasEnv {
		c.Environment = &environment{Variables: maps.Clone(f.cfg.Env)}
		if c.Environment.Variables == nil {
			c.Environment.Variables = map[string]string{}
		}
	}
	return c
}

// ---- errors ----

func invalidParameter(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("InvalidParameterValueException", format, args...)
}

func (s *Service) notFound(name string) *awsapi.Error {
	return awsapi.NotFound404("Function not found: %s", s.functionARN(name))
}

func (s *Service) functionARN(name string) string {
	return s.env.ARN("lambda", "function:"+name)
}

// jsonStatus is a JSON result with a status other than 200.
func jsonStatus(status int, v any) (*awsapi.Raw, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if v != nil {
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
	}
	h := http.Header{}
	if v != nil {
		h.Set("Content-Type", "application/json")
	}
	return &awsapi.Raw{Status: status, Header: h, Body: bytes.TrimRight(buf.Bytes(), "\n")}, nil
}

// ---- name resolution ----

// parseFunctionName accepts a name, a name with a qualifier (f:$LATEST), a
// partial ARN (123456789012:function:f) or a full ARN, and returns the name
// and qualifier.
func parseFunctionName(s string) (name, qualifier string) {
	if strings.HasPrefix(s, "arn:") {
		a, err := awsapi.ParseARN(s)
		if err != nil {
			return s, ""
		}
		s = strings.TrimPrefix(a.Resource, "function:")
	} else if i := strings.Index(s, ":function:"); i >= 0 {
		s = s[i+len(":function:"):]
	}
	name, qualifier, _ = strings.Cut(s, ":")
	return name, qualifier
}

// lookupLocked finds a function by any form of its name. A qualifier other
// than $LATEST (versions and aliases are not modelled) is not found.
func (s *Service) lookupLocked(ref, qualifier string) (*function, *awsapi.Error) {
	name, q := parseFunctionName(ref)
	if q == "" {
		q = qualifier
	}
	f, ok := s.functions[name]
	if !ok || f.deleted {
		return nil, s.notFound(name)
	}
	if q != "" && q != "$LATEST" {
		return nil, awsapi.NotFound404("Function not found: %s:%s", f.arn, q)
	}
	return f, nil
}

// ---- code ----

// extract validates a zip and writes its files under dir.
func extract(zipBytes []byte, dir string) error {
	zr, err := zip.NewReader(bytes.NewReader(zipBytes), int64(len(zipBytes)))
	if err != nil {
		return invalidParameter("Could not unzip uploaded file. Please check your file, then try to upload again.")
	}
	var total uint64
	for _, zf := range zr.File {
		total += zf.UncompressedSize64
	}
	if total > maxUnzippedBytes {
		return invalidParameter("Unzipped size must be smaller than %d bytes", maxUnzippedBytes)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, zf := range zr.File {
		clean := filepath.Clean("/" + zf.Name)
		target := filepath.Join(dir, clean)
		if zf.FileInfo().IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := zf.Mode().Perm()
		if mode == 0 {
			mode = 0o644
		}
		rc, err := zf.Open()
		if err != nil {
			return invalidParameter("Could not unzip uploaded file. Please check your file, then try to upload again.")
		}
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
		if err != nil {
			_ = rc.Close() // the open error is the one to report
			return err
		}
		_, err = io.Copy(out, rc)
		if cerr := rc.Close(); err == nil {
			err = cerr
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return invalidParameter("Could not unzip uploaded file. Please check your file, then try to upload again.")
		}
	}
	return nil
}

func codeSha256(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// ---- validation ----

func validateArch(archs []string) (string, *awsapi.Error) {
	if len(archs) == 0 {
		return "x86_64", nil
	}
	if len(archs) > 1 {
		return "", awsapi.ValidationException("1 validation error detected: Value '[%s]' at 'architectures' failed to satisfy constraint: Member must have length less than or equal to 1", strings.Join(archs, ", "))
	}
	if archs[0] != "x86_64" && archs[0] != "arm64" {
		return "", awsapi.ValidationException("1 validation error detected: Value '[%s]' at 'architectures' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [x86_64, arm64]]", archs[0])
	}
	return archs[0], nil
}

func validateCommon(timeout, memory int, env *environment) *awsapi.Error {
	if timeout < 1 || timeout > 900 {
		return awsapi.ValidationException("1 validation error detected: Value '%d' at 'timeout' failed to satisfy constraint: Member must have value %s", timeout, map[bool]string{true: "greater than or equal to 1", false: "less than or equal to 900"}[timeout < 1])
	}
	if memory < 128 || memory > 10240 {
		return awsapi.ValidationException("1 validation error detected: Value '%d' at 'memorySize' failed to satisfy constraint: Member must have value %s", memory, map[bool]string{true: "greater than or equal to 128", false: "less than or equal to 10240"}[memory < 128])
	}
	if env != nil {
		var bad []string
		for k := range env.Variables {
			if slices.Contains(reservedEnvKeys, k) {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 {
			sort.Strings(bad)
			return invalidParameter("Lambda was unable to configure your environment variables because the environment variables you have provided contains reserved keys that are currently not supported for modification. Reserved keys used in this request: %s", strings.Join(bad, ", "))
		}
		size := 0
		for k, v := range env.Variables {
			size += len(k) + len(v)
		}
		if size > 4096 {
			return invalidParameter("Lambda was unable to configure your environment variables because the environment variables you have provided exceeded the 4KB limit. String measured: %d", size)
		}
	}
	return nil
}

func validateRuntime(rt string) *awsapi.Error {
	if !slices.Contains(supported, rt) {
		return invalidParameter("The runtime parameter of %s is not supported by the local stack: use one of %s with a bootstrap at the root of the zip", rt, strings.Join(supported, ", "))
	}
	return nil
}

func (s *Service) checkRole(role string) error {
	if !roleArnRe.MatchString(role) {
		return awsapi.ValidationException("1 validation error detected: Value '%s' at 'role' failed to satisfy constraint: Member must satisfy regular expression pattern: arn:(aws[a-zA-Z-]*)?:iam::\\d{12}:role/?[a-zA-Z_0-9+=,.@\\-_/]+", role)
	}
	if s.opts.Roles == nil {
		return nil
	}
	rc := s.opts.Roles()
	if rc == nil {
		return nil
	}
	if err := rc.RoleAssumableBy(role, "lambda.amazonaws.com"); err != nil {
		var e *awsapi.Error
		if errors.As(err, &e) {
			return e
		}
		return invalidParameter("The role defined for the function cannot be assumed by Lambda.")
	}
	return nil
}

// ---- operations ----

func (s *Service) createFunction(req *awsapi.Request, in *createFunctionInput) (any, error) {
	if !functionNameRe.MatchString(in.FunctionName) {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?", in.FunctionName)
	}
	arn := s.functionARN(in.FunctionName)
	if err := req.Authorize("lambda:CreateFunction", arn); err != nil {
		return nil, err
	}
	cfg, err := s.newConfig(in)
	if err != nil {
		return nil, err
	}
	f, out, err := s.addFunction(in, arn, cfg)
	if err != nil {
		return nil, err
	}
	s.after(f, func() {
		f.state, f.stateReason, f.stateReasonCode = StateActive, "", ""
		f.lastUpdate = UpdateSuccess
		f.revisionID = awsapi.NewUUID()
	})
	return jsonStatus(http.StatusCreated, out)
}

// newConfig checks a CreateFunction input, in Lambda's order, and returns
// the configuration it asks for, its code not yet extracted.
func (s *Service) newConfig(in *createFunctionInput) (config, error) {
	if in.PackageType == "Image" || (in.Code != nil && in.Code.ImageURI != nil) {
		return config{}, invalidParameter("Container image functions are not supported by the local stack")
	}
	if err := validateRuntime(in.Runtime); err != nil {
		return config{}, err
	}
	if in.Code == nil || (len(in.Code.ZipFile) == 0 && in.Code.S3Bucket == nil) {
		return config{}, invalidParameter("Please provide a source for function code.")
	}
	if in.Code.S3Bucket != nil {
		return config{}, invalidParameter("Code from S3 is not supported by the local stack: upload ZipFile")
	}
	if len(in.Code.ZipFile) > maxZipBytes {
		return config{}, zipTooLarge("CreateFunction")
	}
	arch, aerr := validateArch(in.Architectures)
	if aerr != nil {
		return config{}, aerr
	}
	cfg := config{Runtime: in.Runtime, Role: in.Role, Handler: in.Handler, Description: in.Description,
		Timeout: defaultTimeout, MemorySize: defaultMemorySize, Arch: arch,
		LogGroup: "/aws/lambda/" + in.FunctionName, LogFormat: "Text",
		CodeSha256: codeSha256(in.Code.ZipFile), CodeSize: int64(len(in.Code.ZipFile)), Zip: in.Code.ZipFile}
	if err := cfg.setSettings(in.Timeout, in.MemorySize, in.Environment); err != nil {
		return config{}, err
	}
	if err := s.checkRole(in.Role); err != nil {
		return config{}, err
	}
	cfg.setLogging(in.LoggingConfig)
	if err := s.setControls(&cfg, in.controlsInput, in.LoggingConfig); err != nil {
		return config{}, err
	}
	return cfg, nil
}

// setSettings applies the timeout, memory size and environment an input
// asks for, keeping those it leaves out, and checks the result.
func (c *config) setSettings(timeout, memory *int, env *environment) error {
	if timeout != nil {
		c.Timeout = *timeout
	}
	if memory != nil {
		c.MemorySize = *memory
	}
	if err := validateCommon(c.Timeout, c.MemorySize, env); err != nil {
		return err
	}
	if env != nil {
		c.HasEnv = true
		c.Env = maps.Clone(env.Variables)
	}
	return nil
}

// setLogging applies the log group and format of a LoggingConfig.
func (c *config) setLogging(l *loggingConfig) {
	if l == nil {
		return
	}
	if l.LogGroup != "" {
		c.LogGroup = l.LogGroup
	}
	if l.LogFormat != "" {
		c.LogFormat = l.LogFormat
	}
}

func zipTooLarge(op string) *awsapi.Error {
	return awsapi.NewError("RequestEntityTooLargeException", "Request must be smaller than %d bytes for the %s operation", maxZipBytes, op).WithStatus(http.StatusRequestEntityTooLarge)
}

// addFunction extracts the code and adds the function, Pending.
func (s *Service) addFunction(in *createFunctionInput, arn string, cfg config) (*function, functionConfiguration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.functions[in.FunctionName]; ok && !f.deleted {
		return nil, functionConfiguration{}, awsapi.ResourceConflictException("Function already exist: %s", in.FunctionName)
	}
	if s.closed {
		return nil, functionConfiguration{}, awsapi.ServiceUnavailable("the stack is closing")
	}
	f := &function{name: in.FunctionName, arn: arn, cfg: cfg, codeSeq: 1}
	f.cfg.CodeDir = filepath.Join(s.dir, fmt.Sprintf("%s-%d-%s", in.FunctionName, f.codeSeq, awsapi.NewUUID()[:8]))
	if err := extract(in.Code.ZipFile, f.cfg.CodeDir); err != nil {
		_ = os.RemoveAll(f.cfg.CodeDir)
		return nil, functionConfiguration{}, err
	}
	f.tags = maps.Clone(in.Tags)
	if f.tags == nil {
		f.tags = map[string]string{}
	}
	f.state, f.stateReason, f.stateReasonCode = StatePending, "The function is being created.", "Creating"
	f.revisionID = awsapi.NewUUID()
	f.lastModified = s.env.Time()
	f.pool = newPool(s, f)
	s.functions[f.name] = f
	return f, s.configurationLocked(f), nil
}

// after runs fn under the lock once StateDelay has passed (or at once when
// the service closes), unless f has been deleted by then.
func (s *Service) after(f *function, fn func()) {
	s.Go(func() {
		awsapi.Sleep(s.Context(), s.opts.StateDelay)
		s.mu.Lock()
		defer s.mu.Unlock()
		if !f.deleted {
			fn()
		}
	})
}

// Whether an operation reads the Qualifier query parameter.
const (
	qualified   = true
	unqualified = false
)

// onFunction runs h with the function the path names, under the lock, once
// the caller may perform action on it.
func (s *Service) onFunction(req *awsapi.Request, action string, withQualifier bool, h func(f *function) (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.authorizedLocked(req, action, withQualifier)
	if err != nil {
		return nil, err
	}
	return h(f)
}

// authorizedLocked finds the function the path names and authorises
// action on it. Callers hold s.mu.
func (s *Service) authorizedLocked(req *awsapi.Request, action string, withQualifier bool) (*function, error) {
	qualifier := ""
	if withQualifier {
		qualifier = req.Query().Get("Qualifier")
	}
	f, err := s.lookupLocked(req.PathValue("FunctionName"), qualifier)
	if err != nil {
		return nil, err
	}
	if err := req.Authorize(action, f.arn); err != nil {
		return nil, err
	}
	return f, nil
}

func (s *Service) getFunctionConfiguration(req *awsapi.Request) (any, error) {
	return s.onFunction(req, "lambda:GetFunctionConfiguration", qualified, func(f *function) (any, error) {
		return s.configurationLocked(f), nil
	})
}

func (s *Service) getFunction(req *awsapi.Request) (any, error) {
	return s.onFunction(req, "lambda:GetFunction", qualified, s.functionLocked)
}

func (s *Service) functionLocked(f *function) (any, error) {
	out := map[string]any{
		"Configuration": s.configurationLocked(f),
		"Code": map[string]string{
			"RepositoryType": "S3",
			"Location": s.env.Endpoint + awsapi.ControlPrefix + "lambda/code/" + f.name + "?sha256=" + strings.NewReplacer("+", "-", "/", "_").Replace(f.cfg.CodeSha256) +
				"&region=" + s.env.Region, // the control routes of the function's Region
		},
		"Tags": maps.Clone(f.tags),
	}
	if f.reserved != nil {
		out["Concurrency"] = map[string]int{"ReservedConcurrentExecutions": *f.reserved}
	}
	return out, nil
}

func (s *Service) deleteFunction(req *awsapi.Request) (any, error) {
	s.mu.Lock()
	f, err := s.authorizedLocked(req, "lambda:DeleteFunction", qualified)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	f.deleted = true
	delete(s.functions, f.name)
	dir := f.cfg.CodeDir
	s.mu.Unlock()
	f.pool.shutdown()
	_ = os.RemoveAll(dir)
	return jsonStatus(http.StatusNoContent, nil)
}

func (s *Service) listFunctions(req *awsapi.Request) (any, error) {
	if err := req.Authorize("lambda:ListFunctions", "*"); err != nil {
		return nil, err
	}
	q := req.Query()
	maxItems, ok := awsapi.IntParam(q, "MaxItems", 50, 1, 10000)
	if !ok {
		return nil, invalidParameter("MaxItems must be within 1 and 10000")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := slices.Sorted(maps.Keys(s.functions))
	marker, err := base64.RawURLEncoding.DecodeString(q.Get("Marker"))
	if err != nil {
		return nil, invalidParameter("Invalid marker: %s", q.Get("Marker"))
	}
	out := map[string]any{}
	page, next := awsapi.PageNames(names, string(marker), maxItems)
	if next != "" {
		out["NextMarker"] = base64.RawURLEncoding.EncodeToString([]byte(next))
	}
	fns := make([]functionConfiguration, 0, len(page))
	for _, n := range page {
		fns = append(fns, s.configurationLocked(s.functions[n]))
	}
	out["Functions"] = fns
	return out, nil
}

// beginUpdateLocked checks a function can be updated and marks the update
// in progress.
func (s *Service) beginUpdateLocked(f *function, revisionID *string) *awsapi.Error {
	if f.state == StatePending || f.lastUpdate == UpdateInProg {
		return awsapi.ResourceConflictException("The operation cannot be performed at this time. An update is in progress for resource: %s", f.arn)
	}
	if revisionID != nil && *revisionID != f.revisionID {
		return invalidParameter("The Revision Id provided does not match the latest Revision Id. Call the GetFunction/GetAlias API to retrieve the latest Revision Id")
	}
	return nil
}

func (s *Service) finishUpdate(f *function) {
	f.lastUpdate, f.lastUpdateReason, f.lastUpdateCode = UpdateInProg, "The function is being created.", "Creating"
	f.revisionID = awsapi.NewUUID()
	f.lastModified = s.env.Time()
	s.after(f, func() {
		f.lastUpdate, f.lastUpdateReason, f.lastUpdateCode = UpdateSuccess, "", ""
		f.revisionID = awsapi.NewUUID()
	})
}

// toUpdate finds the function an update names, authorises action on it
// and returns it with a copy of its configuration, which the update
// changes outside the lock before commitUpdate.
func (s *Service) toUpdate(req *awsapi.Request, action string) (*function, config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.authorizedLocked(req, action, unqualified)
	if err != nil {
		return nil, config{}, err
	}
	return f, f.cfg, nil
}

// commitUpdate applies an update to f under the lock, when f still exists
// and no other update is in progress, marks the update in progress and
// retires the processes started with the former configuration.
func (s *Service) commitUpdate(f *function, revisionID *string, apply func() error) (any, error) {
	out, err := func() (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if f.deleted {
			return nil, s.notFound(f.name)
		}
		if err := s.beginUpdateLocked(f, revisionID); err != nil {
			return nil, err
		}
		if err := apply(); err != nil {
			return nil, err
		}
		s.finishUpdate(f)
		return s.configurationLocked(f), nil
	}()
	if err != nil {
		return nil, err
	}
	f.pool.retire()
	return out, nil
}

func (s *Service) updateFunctionConfiguration(req *awsapi.Request, in *updateFunctionConfigurationInput) (any, error) {
	f, cfg, err := s.toUpdate(req, "lambda:UpdateFunctionConfiguration")
	if err != nil {
		return nil, err
	}

	if in.Runtime != nil {
		if err := validateRuntime(*in.Runtime); err != nil {
			return nil, err
		}
		cfg.Runtime = *in.Runtime
	}
	if in.Handler != nil {
		cfg.Handler = *in.Handler
	}
	if in.Description != nil {
		cfg.Description = *in.Description
	}
	if err := cfg.setSettings(in.Timeout, in.MemorySize, in.Environment); err != nil {
		return nil, err
	}
	cfg.setLogging(in.LoggingConfig)
	if in.Role != nil {
		if err := s.checkRole(*in.Role); err != nil {
			return nil, err
		}
		cfg.Role = *in.Role
	}
	if err := s.setControls(&cfg, in.controlsInput, in.LoggingConfig); err != nil {
		return nil, err
	}
	return s.commitUpdate(f, in.RevisionID, func() error {
		cfg.CodeDir, cfg.Zip = f.cfg.CodeDir, f.cfg.Zip
		f.cfg = cfg
		return nil
	})
}

func (s *Service) updateFunctionCode(req *awsapi.Request, in *updateFunctionCodeInput) (any, error) {
	f, cfg, err := s.toUpdate(req, "lambda:UpdateFunctionCode")
	if err != nil {
		return nil, err
	}
	arch := cfg.Arch
	if in.ImageURI != nil || in.S3Bucket != nil {
		return nil, invalidParameter("Only ZipFile code is supported by the local stack")
	}
	if len(in.ZipFile) == 0 {
		return nil, invalidParameter("Please provide a source for function code.")
	}
	if len(in.ZipFile) > maxZipBytes {
		return nil, zipTooLarge("UpdateFunctionCode")
	}
	if len(in.Architectures) > 0 {
		a, aerr := validateArch(in.Architectures)
		if aerr != nil {
			return nil, aerr
		}
		arch = a
	}
	if in.DryRun {
		s.mu.Lock()
		defer s.mu.Unlock()
		out := s.configurationLocked(f)
		out.CodeSha256, out.CodeSize, out.Architectures = codeSha256(in.ZipFile), int64(len(in.ZipFile)), []string{arch}
		return out, nil
	}

	var old string
	out, err := s.commitUpdate(f, in.RevisionID, func() error {
		f.codeSeq++
		dir := filepath.Join(s.dir, fmt.Sprintf("%s-%d-%s", f.name, f.codeSeq, awsapi.NewUUID()[:8]))
		if err := extract(in.ZipFile, dir); err != nil {
			_ = os.RemoveAll(dir)
			return err
		}
		old = f.cfg.CodeDir
		f.cfg.CodeDir, f.cfg.Zip = dir, in.ZipFile
		f.cfg.CodeSha256, f.cfg.CodeSize, f.cfg.Arch = codeSha256(in.ZipFile), int64(len(in.ZipFile)), arch
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Running processes keep their executable open; new ones use the new
	// directory.
	_ = os.RemoveAll(old)
	return out, nil
}

// ---- tags ----

func (s *Service) taggedLocked(resource string) (*function, *awsapi.Error) {
	if !strings.HasPrefix(resource, "arn:") {
		return nil, awsapi.ValidationException("1 validation error detected: Value '%s' at 'resource' failed to satisfy constraint: Member must satisfy regular expression pattern: arn:(aws[a-zA-Z-]*):lambda:[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{1}:\\d{12}:(function:[a-zA-Z0-9-_]+(:(\\$LATEST|[a-zA-Z0-9-_]+))?|code-signing-config:csc-[a-z0-9]{17}|event-source-mapping:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", resource)
	}
	return s.lookupLocked(resource, "")
}

// onTagged runs h with the function the tagging path names (its ARN),
// under the lock, once the caller may perform action on it.
func (s *Service) onTagged(req *awsapi.Request, action string, h func(f *function) (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.taggedLocked(req.PathValue("Resource"))
	if err != nil {
		return nil, err
	}
	if err := req.Authorize(action, f.arn); err != nil {
		return nil, err
	}
	return h(f)
}

func (s *Service) listTags(req *awsapi.Request) (any, error) {
	return s.onTagged(req, "lambda:ListTags", func(f *function) (any, error) {
		return map[string]any{"Tags": maps.Clone(f.tags)}, nil
	})
}

// tagsInput is the body of TagResource.
type tagsInput struct {
	Tags map[string]string `json:"Tags"`
}

func (s *Service) tagResource(req *awsapi.Request, in *tagsInput) (any, error) {
	return s.onTagged(req, "lambda:TagResource", func(f *function) (any, error) {
		if awsapi.MergedLen(f.tags, in.Tags) > 50 {
			return nil, invalidParameter("Number of tags exceeds resource tag limit.")
		}
		maps.Copy(f.tags, in.Tags)
		return jsonStatus(http.StatusNoContent, nil)
	})
}

func (s *Service) untagResource(req *awsapi.Request) (any, error) {
	keys := req.Query()["tagKeys"]
	return s.onTagged(req, "lambda:UntagResource", func(f *function) (any, error) {
		awsapi.Untag(f.tags, keys)
		return jsonStatus(http.StatusNoContent, nil)
	})
}

// ---- concurrency ----

func (s *Service) reservedTotalLocked(except string) int {
	n := 0
	for name, f := range s.functions {
		if name != except && f.reserved != nil {
			n += *f.reserved
		}
	}
	return n
}

// concurrencyInput is the body of PutFunctionConcurrency.
type concurrencyInput struct {
	ReservedConcurrentExecutions *int `json:"ReservedConcurrentExecutions"`
}

func (s *Service) putFunctionConcurrency(req *awsapi.Request, in *concurrencyInput) (any, error) {
	if in.ReservedConcurrentExecutions == nil || *in.ReservedConcurrentExecutions < 0 {
		return nil, awsapi.ValidationException("1 validation error detected: Value at 'reservedConcurrentExecutions' failed to satisfy constraint: Member must have value greater than or equal to 0")
	}
	n := *in.ReservedConcurrentExecutions
	return s.onFunction(req, "lambda:PutFunctionConcurrency", unqualified, func(f *function) (any, error) {
		// AWS keeps 100 of the account's concurrency unreserved.
		if s.reservedTotalLocked(f.name)+n > s.opts.AccountConcurrency-100 {
			return nil, invalidParameter("Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [100].")
		}
		f.reserved = &n
		return map[string]int{"ReservedConcurrentExecutions": n}, nil
	})
}

func (s *Service) getFunctionConcurrency(req *awsapi.Request) (any, error) {
	return s.onFunction(req, "lambda:GetFunctionConcurrency", unqualified, func(f *function) (any, error) {
		if f.reserved == nil {
			return map[string]any{}, nil
		}
		return map[string]int{"ReservedConcurrentExecutions": *f.reserved}, nil
	})
}

func (s *Service) deleteFunctionConcurrency(req *awsapi.Request) (any, error) {
	return s.onFunction(req, "lambda:DeleteFunctionConcurrency", unqualified, func(f *function) (any, error) {
		f.reserved = nil
		return jsonStatus(http.StatusNoContent, nil)
	})
}

// ---- in-process API ----

// FunctionInfo returns a function's ARN, execution role and state
// (Pending, Active) by name or ARN, for event source mappings.
func (s *Service) FunctionInfo(name string) (arn, roleArn, state string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.lookupLocked(name, "")
	if err != nil {
		return "", "", "", false
	}
	return f.arn, f.cfg.Role, f.state, true
}

// FunctionTimeout returns a function's timeout in seconds (name or ARN).
func (s *Service) FunctionTimeout(name string) (seconds int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.lookupLocked(name, "")
	if err != nil {
		return 0, false
	}
	return f.cfg.Timeout, true
}
